package prefault

import (
	"runtime/debug"
	"slices"
	"testing"
	"unsafe"
)

// TestMake: Make gives n zero values and room for c, at every size around
// the huge pages' threshold, for elements of any size.
func TestMake(t *testing.T) {
	huge := hugePage()
	for _, size := range []int{0, 1, 4096, huge - 1, huge, minHuge*huge - 1, minHuge * huge, minHuge*huge + 1, 5*huge + 3} {
		n := size / 8
		s := Make[int64](n, n+7)
		if len(s) != n || cap(s) < n+7 {
			t.Fatalf("Make(%d, %d): len %d cap %d", n, n+7, len(s), cap(s))
		}
		if slices.ContainsFunc(s, func(v int64) bool { return v != 0 }) {
			t.Fatalf("Make(%d): not zero", n)
		}
		s = s[:cap(s)] // all the capacity is writable
		for i := range s {
			s[i] = int64(i)
		}
		odd := Make[[3]byte](size/3, 0) // 3 divides no huge page
		if len(odd) != size/3 || cap(odd) < size/3 {
			t.Fatalf("Make[[3]byte](%d): len %d cap %d", size/3, len(odd), cap(odd))
		}
		for i := range odd[:cap(odd)] {
			odd[:cap(odd)][i] = [3]byte{byte(i), 1, 2}
		}
	}
	if s := Make[int32](3, 1); len(s) != 3 || cap(s) < 3 {
		t.Fatalf("Make(3, 1): len %d cap %d, want the capacity raised to 3", len(s), cap(s))
	}
}

// TestMakeStaggered: where the kernel has huge pages, a large slice
// starts a little past the start of a huge page, by an offset that
// differs from the last slices' within a 4 KiB page.
func TestMakeStaggered(t *testing.T) {
	huge := uintptr(hugePage())
	if huge == 0 {
		t.Skip("no transparent huge pages on this system")
	}
	seen := map[uintptr]bool{}
	for range staggers {
		s := Make[float64](minHuge*int(huge)/8, 0)
		at := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		if off := at % huge; off >= staggers*staggerStep {
			t.Fatalf("slice at %#x, %d bytes past a huge page", at, off)
		}
		if seen[at%4096] {
			t.Fatalf("slice at %#x: another began at the same place of a 4 KiB page", at)
		}
		seen[at%4096] = true
	}
}

// TestGrowResize: Grow and Resize keep the contents, make room as asked
// and move only when they must.
func TestGrowResize(t *testing.T) {
	s := []int32{1, 2, 3}
	g := Grow(s, 5)
	if !slices.Equal(g, s) || cap(g)-len(g) < 5 {
		t.Fatalf("Grow: %v cap %d", g, cap(g))
	}
	if h := Grow(g, 5); unsafe.SliceData(h) != unsafe.SliceData(g) {
		t.Fatal("Grow moved a slice with room enough")
	}
	big := Resize(s, 3<<20)
	if len(big) != 3<<20 || !slices.Equal(big[:3], s) || slices.ContainsFunc(big[3:], func(v int32) bool { return v != 0 }) {
		t.Fatalf("Resize up: len %d, head %v", len(big), big[:3])
	}
	if r := Resize(big, 2); len(r) != 2 || unsafe.SliceData(r) != unsafe.SliceData(big) || !slices.Equal(r, s[:2]) {
		t.Fatal("Resize down moved or changed the slice")
	}
}

// BenchmarkFreshSlice measures allocating 256 MiB fresh from the system
// (returned to it before each round) and writing it, by make or by Make.
func BenchmarkFreshSlice(b *testing.B) {
	for _, c := range []struct {
		name string
		make func(n int) []float64
	}{
		{"make", func(n int) []float64 { return make([]float64, n) }},
		{"Make", func(n int) []float64 { return Make[float64](n, 0) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(8 << 25)
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory()
				b.StartTimer()
				s := c.make(1 << 25)
				for i := range s {
					s[i] = 1
				}
			}
		})
	}
}
