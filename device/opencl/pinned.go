package opencl

import (
	"errors"
	"fmt"
	"unsafe"
)

// Pinned is page-locked host memory that the device reaches directly: a
// transfer from or into it (WriteAsync, ReadAsync, Write, Read of a slice
// of it) runs at the bus's full speed, without the driver's own copy
// through a staging buffer, and an asynchronous one returns at once.
// From pageable memory (the Go heap) a driver copies the data itself,
// on one thread, and may hold the caller until it has. Bytes is the
// memory; Slice views it as other types. Release frees it.
type Pinned struct {
	buf   *Buffer
	Bytes []byte
}

// The flags of a pinned buffer and of its mapping.
const (
	allocHostPtr = 1 << 4 // CL_MEM_ALLOC_HOST_PTR
	mapRead      = 1 << 0 // CL_MAP_READ
	mapWrite     = 1 << 1 // CL_MAP_WRITE
)

// NewPinned allocates size bytes of pinned host memory: a buffer the
// driver allocates in host memory, mapped once for the host.
func (c *Context) NewPinned(size int) (*Pinned, error) {
	buf, err := c.NewBuffer(size, ReadWrite|allocHostPtr)
	if err != nil {
		return nil, err
	}
	var code int32
	ptr := c.a.enqueueMap(c.queue, buf.mem, 1, mapRead|mapWrite, 0, uintptr(size), 0, nil, nil, &code)
	if err := check("clEnqueueMapBuffer", code); err != nil {
		return nil, errors.Join(err, buf.Release())
	}
	if ptr == nil {
		return nil, errors.Join(fmt.Errorf("opencl: clEnqueueMapBuffer gave no memory"), buf.Release())
	}
	return &Pinned{buf: buf, Bytes: unsafe.Slice((*byte)(ptr), size)}, nil
}

// Release unmaps and frees the memory, once no transfer uses it; a second
// call does nothing.
func (p *Pinned) Release() error {
	if p == nil || p.buf == nil {
		return nil
	}
	c := p.buf.c
	err := check("clEnqueueUnmapMemObject", c.a.enqueueUnmap(c.queue, p.buf.mem, unsafe.Pointer(unsafe.SliceData(p.Bytes)), 0, nil, nil))
	err = errors.Join(err, check("clFinish", c.a.finish(c.queue)), p.buf.Release())
	p.buf, p.Bytes = nil, nil
	return err
}

// Slice views n values of type T of p's memory from byte offset off,
// which must be a multiple of T's alignment.
func Slice[T any](p *Pinned, off, n int) []T {
	var zero T
	size, align := int(unsafe.Sizeof(zero)), int(unsafe.Alignof(zero))
	if off < 0 || n < 0 || off%align != 0 || off+n*size > len(p.Bytes) {
		panic(fmt.Sprintf("opencl: %d values of %d bytes at %d of %d pinned bytes", n, size, off, len(p.Bytes)))
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&p.Bytes[off])), n)
}
