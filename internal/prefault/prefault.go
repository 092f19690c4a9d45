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
// allocated. Neither changes the memory's contents. Make is for storage
// made once and used for a whole run (CLUE's columns, J-PET's kept
// values, text blocks): the pixel clusterer's recycled buffers, made of
// huge pages, measured 15-20 % slower in its steady state on a virtual
// machine, and keep plain make.
package prefault

import (
	"sync/atomic"
	"unsafe"
)

// Make is make([]T, n, c) (c raised to n) for a slice that will be
// written whole. A slice of a few huge pages or more is asked for as huge
// pages before anything touches it, from the first huge page it reaches;
// its capacity may be more than c, up to the end of its last huge page
// where the allocation reaches it. The bytes skipped to reach a huge
// page are never touched, so they take no memory.
func Make[T any](n, c int) []T {
	c = max(n, c)
	var zero T
	es := unsafe.Sizeof(zero)
	huge := uintptr(hugePage())
	if huge == 0 || es == 0 || uintptr(c)*es < minHuge*huge {
		return make([]T, n, c)
	}
	off := uintptr(stagger.Add(1)%staggers) * staggerStep
	all := make([]T, c+int((huge+off+es-1)/es))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(all)))
	page := -base & (huge - 1) // where the first huge page starts
	skip := int((page + off + es - 1) / es)
	end := min(len(all), int((alignUp(base+uintptr(skip+c)*es, huge)-base)/es))
	advise(bytes(all[:end])[page:])
	return all[skip:end][:n]
}

// Slices made by Make start past their first huge page's start by
// staggers different offsets in turn: columns that all started there
// would map to the same sets of the caches, which a loop over several
// of them at once (coordinates, weights, densities) would keep evicting
// from each other. The step is an odd number of cache lines, so the
// offsets differ within every 4 KiB page too.
const (
	staggers    = 32
	staggerStep = 17 * 64
)

var stagger atomic.Uint32

// minHuge is the fewest huge pages an allocation must span to be made of
// them: reaching the first one skips up to one.
const minHuge = 2

func alignUp(n, a uintptr) uintptr { return (n + a - 1) &^ (a - 1) }

// Grow is slices.Grow for a slice that will be written whole: when s
// must move to make room for n more elements, it moves to storage from
// [Make] a quarter larger than it needs: a slice grown step by step is
// copied a bounded number of times, and storage the allocator reuses,
// which it clears whole, costs little more than what is needed.
func Grow[T any](s []T, n int) []T {
	if n <= cap(s)-len(s) {
		return s
	}
	need := len(s) + n
	t := Make[T](len(s), need+need/4)
	copy(t, s)
	if cap(s) > 0 {
		release(bytes(s[:cap(s)]))
	}
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
