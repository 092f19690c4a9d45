package prefault

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate asks the kernel (Linux 5.14 on) to map the whole pages within b
// writable, which leaves their contents as they are; an older kernel
// refuses, and the pages fault as before, as do the partial pages at
// b's ends.
func populate(b []byte) {
	page := os.Getpagesize()
	skip := -int(uintptr(unsafe.Pointer(&b[0]))) & (page - 1)
	if n := (len(b) - skip) &^ (page - 1); n > 0 {
		unix.Madvise(b[skip:skip+n], unix.MADV_POPULATE_WRITE)
	}
}
