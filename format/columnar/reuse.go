package columnar

import (
	"math/bits"
	"sync"
)

// reusingAllocator is an Arrow memory allocator that hands the buffers of
// released record batches out again. A table writes batch after batch of
// the same columns, so after the first batch every column buffer is a
// reuse: no fresh pages to fault in, nothing for the garbage collector
// (Arrow's Go allocator makes new memory every batch and leaves the old
// to the collector, which cost a tenth of an end-to-end run in page
// faults alone). Reused memory is not zeroed unless zero is set: Arrow's
// builders clear the validity bitmaps they grow and write every value
// they keep. Parquet's writer is given zeroed memory, as Go's allocator
// gives it, since nothing there promises to write every byte it reads.
type reusingAllocator struct {
	zero bool
	mu   sync.Mutex
	free [64][][]byte // by log2 of the capacity
}

// class is the power-of-two capacity class of a request of size bytes.
func class(size int) int { return bits.Len(uint(max(size, 64) - 1)) }

func (a *reusingAllocator) Allocate(size int) []byte {
	c := class(size)
	a.mu.Lock()
	if l := a.free[c]; len(l) > 0 {
		b := l[len(l)-1]
		a.free[c] = l[:len(l)-1]
		a.mu.Unlock()
		if a.zero {
			clear(b[:size])
		}
		return b[:size]
	}
	a.mu.Unlock()
	return make([]byte, size, 1<<c)
}

func (a *reusingAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		if a.zero && size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *reusingAllocator) Free(b []byte) {
	c := bits.Len(uint(cap(b))) - 1
	if cap(b) < 64 || cap(b) != 1<<c {
		return // not one of ours: the collector takes it
	}
	a.mu.Lock()
	a.free[c] = append(a.free[c], b[:0])
	a.mu.Unlock()
}
