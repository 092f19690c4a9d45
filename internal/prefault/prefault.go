// Package prefault makes the first writes to fresh memory cheaper. Every
// page of memory new to a process faults on its first write, and on some
// machines (virtual machines above all) a fault costs microseconds: a
// fresh 4 KiB page can cost more than filling it. Two remedies:
//
//   - [Make] asks the system to back a large allocation with transparent
//     huge pages, where it offers them on request (Linux in its default
//     "madvise" mode): one fault maps 2 MiB instead of 4 KiB;
//   - [Slice] maps the pages of a range in one system call before it is
//     written, rather than a fault a page, and none of the faults where
//     many goroutines write at once.
//
// Memory in use gains nothing and pays the call: both are for memory just
// allocated. Neither changes the memory's contents.
package prefault

import "unsafe"

// Make is make([]T, n, c) (c raised to n) for a slice that will be
// written whole. A slice of a few huge pages or more starts on a huge page
// and is asked for as huge pages before anything touches it; its capacity
// may be more than c, up to the end of its last huge page where the
// allocation reaches it. The bytes skipped to reach a huge page are never
// touched, so they take no memory.
func Make[T any](n, c int) []T {
	c = max(n, c)
	var zero T
	es := unsafe.Sizeof(zero)
	huge := uintptr(hugePage())
	if huge == 0 || es == 0 || uintptr(c)*es < minHuge*huge {
		return make([]T, n, c)
	}
	s := make([]T, c+int((huge+es-1)/es))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	skip := int((-base&(huge-1) + es - 1) / es)
	stop := alignUp(base+uintptr(skip+c)*es, huge)
	s = s[skip:min(len(s), int((stop-base)/es))]
	advise(bytes(s))
	return s[:n]
}

// minHuge is the fewest huge pages an allocation must span to be made of
// them: reaching the first one skips up to one.
const minHuge = 2

func alignUp(n, a uintptr) uintptr { return (n + a - 1) &^ (a - 1) }

// Grow is slices.Grow for a slice that will be written whole: when s
// must move to make room for n more elements, it moves to storage from
// [Make], half as large again as it needs.
func Grow[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	need := len(s) + n
	t := Make[T](len(s), need+need/2)
	copy(t, s)
	return t
}

// Resize is s with length n, its contents kept, moved as [Grow] moves it
// when its capacity is short.
func Resize[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return Grow(s, n-len(s))[:n]
}

// Slice maps the pages of s for writing; its contents do not change.
func Slice[T any](s []T) {
	if len(s) > 0 {
		populate(bytes(s))
	}
}

// bytes is the memory of s.
func bytes[T any](s []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(zero))
}
