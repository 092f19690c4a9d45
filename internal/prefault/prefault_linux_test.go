package prefault

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkFreshCopy measures copying 256 MiB into memory fresh from the
// system (mapped anew each time), prefaulted a part at a time before each
// part's copy, or not.
func BenchmarkFreshCopy(b *testing.B) {
	src := make([]float64, 1<<16)
	for _, pre := range []bool{false, true} {
		name := "faults"
		if pre {
			name = "prefaulted"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(8 << 25)
			for b.Loop() {
				mem, err := unix.Mmap(-1, 0, 8<<25, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
				if err != nil {
					b.Fatal(err)
				}
				dst := unsafe.Slice((*float64)(unsafe.Pointer(&mem[0])), 1<<25)
				for lo := 0; lo < len(dst); lo += len(src) {
					if pre {
						Slice(dst[lo : lo+len(src)])
					}
					copy(dst[lo:], src)
				}
				if err := unix.Munmap(mem); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
