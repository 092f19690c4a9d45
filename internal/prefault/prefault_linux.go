package prefault

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate asks the kernel (Linux 5.14 on) to map the whole pages within b
// writable, which leaves their contents as they are; an older kernel
// refuses, and the pages fault as before, as do the partial pages at
// b's ends.
func populate(b []byte) {
	if b := whole(b, os.Getpagesize()); b != nil {
		unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	}
}

// advise asks for the whole huge pages within b to be huge pages. Where
// transparent huge pages are off, or on for all memory, the kernel takes
// the advice as a no-op; an error changes nothing, so none is reported.
func advise(b []byte) {
	if b := whole(b, hugePage()); b != nil {
		unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
}

// release takes the advice of huge pages back from the whole huge pages
// within b, storage given up: the allocator puts small objects there
// next, and the runtime returns its free pages to the system a few at a
// time, each return splitting a huge page that a later write would fault
// in whole again, cleared 2 MiB at a time.
func release(b []byte) {
	if b := whole(b, hugePage()); b != nil {
		unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	}
}

// whole is the part of b made of whole pages of the given size, or nil.
func whole(b []byte, page int) []byte {
	if page <= 0 || len(b) < page {
		return nil
	}
	skip := -int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) & (page - 1)
	n := (len(b) - skip) &^ (page - 1)
	if n == 0 {
		return nil
	}
	return b[skip : skip+n]
}

// hugePage is the size of a transparent huge page (2 MiB on amd64), or 0
// where the kernel has none.
var hugePage = sync.OnceValue(func() int {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n&(n-1) != 0 {
		return 0
	}
	return n
})
