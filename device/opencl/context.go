package opencl

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// Context is a device opened for work: an OpenCL context and three
// in-order command queues with profiling, one for the kernels and one
// each for the uploads and the downloads that overlap them (see
// WriteAsync and ReadAsync), so that a device with a copy engine each way
// moves data both ways at once. It is used from one goroutine, but for
// the Wait, Elapsed and Release of an Event, which may be another's (the
// driver's calls are safe from any thread); Close releases it, and
// everything made from it must be released before.
type Context struct {
	a      *api
	Device Device
	ctx    uintptr
	queue  uintptr
	xfer   uintptr
	down   uintptr
	// fail, when set, is returned by the command enqueued after failIn
	// more in place of the driver's answer: tests inject a lost device
	// with it.
	fail   error
	failIn int
}

// live counts the OpenCL objects not yet released, for the tests that
// check that no path leaves one behind.
var live struct{ contexts, programs, kernels, buffers, events atomic.Int64 }

// Live reports the contexts, programs, kernels, buffers and events not
// yet released in this process.
func Live() (contexts, programs, kernels, buffers, events int64) {
	return live.contexts.Load(), live.programs.Load(), live.kernels.Load(), live.buffers.Load(), live.events.Load()
}

const queueProperties = 0x1093 // CL_QUEUE_PROPERTIES
const profilingEnable = 1 << 1 // CL_QUEUE_PROFILING_ENABLE

// Open makes a context and a command queue on d.
func (d Device) Open() (*Context, error) {
	a, err := lib()
	if err != nil {
		return nil, err
	}
	var code int32
	props := [3]uintptr{0x1084 /* CL_CONTEXT_PLATFORM */, d.platform, 0}
	dev := d.id
	ctx := a.createContext(unsafe.Pointer(&props[0]), 1, &dev, 0, 0, &code)
	if err := check("clCreateContext", code); err != nil {
		return nil, fmt.Errorf("%v (device %s)", err, d)
	}
	var queues [3]uintptr
	for i := range queues {
		if queues[i], err = newQueue(a, ctx, dev); err != nil {
			for _, q := range queues[:i] {
				a.releaseQueue(q)
			}
			a.releaseContext(ctx)
			return nil, err
		}
	}
	live.contexts.Add(1)
	return &Context{a: a, Device: d, ctx: ctx, queue: queues[0], xfer: queues[1], down: queues[2]}, nil
}

// newQueue makes an in-order command queue with profiling.
func newQueue(a *api, ctx, dev uintptr) (uintptr, error) {
	var code int32
	var q uintptr
	if a.createQueueWithProp != nil {
		qp := [3]uint64{queueProperties, profilingEnable, 0}
		q = a.createQueueWithProp(ctx, dev, &qp[0], &code)
	} else {
		q = a.createQueue(ctx, dev, profilingEnable, &code)
	}
	return q, check("clCreateCommandQueue", code)
}

// Close waits for the queues and releases them and the context.
func (c *Context) Close() error {
	if c.ctx == 0 {
		return nil
	}
	var err error
	for _, q := range []uintptr{c.queue, c.xfer, c.down} {
		err = errors.Join(err, check("clFinish", c.a.finish(q)))
	}
	for _, q := range []uintptr{c.queue, c.xfer, c.down} {
		err = errors.Join(err, check("clReleaseCommandQueue", c.a.releaseQueue(q)))
	}
	err = errors.Join(err, check("clReleaseContext", c.a.releaseContext(c.ctx)))
	c.ctx, c.queue, c.xfer, c.down = 0, 0, 0, 0
	live.contexts.Add(-1)
	return err
}

// InjectFailure makes the next enqueued command fail with err: for tests
// of what a run does when its device is lost.
func (c *Context) InjectFailure(err error) { c.InjectFailureAfter(0, err) }

// InjectFailureAfter makes the command enqueued after the next n fail
// with err, so that a test can fail a run at each of its steps in turn.
func (c *Context) InjectFailureAfter(n int, err error) { c.fail, c.failIn = err, n }

// injected returns and clears an injected failure that is due.
func (c *Context) injected() error {
	if c.fail == nil {
		return nil
	}
	if c.failIn > 0 {
		c.failIn--
		return nil
	}
	err := c.fail
	c.fail = nil
	return err
}

// Buffer is memory on the device.
type Buffer struct {
	c    *Context
	mem  uintptr
	Size int // bytes
}

// Memory flags of NewBuffer.
const (
	ReadWrite = 1 << 0 // CL_MEM_READ_WRITE
	WriteOnly = 1 << 1 // CL_MEM_WRITE_ONLY
	ReadOnly  = 1 << 2 // CL_MEM_READ_ONLY
)

// NewBuffer allocates size bytes on the device.
func (c *Context) NewBuffer(size int, flags uint64) (*Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("opencl: buffer of %d bytes", size)
	}
	if int64(size) > c.Device.MaxAlloc && c.Device.MaxAlloc > 0 {
		return nil, fmt.Errorf("opencl: a buffer of %d MB is more than %s takes in one (%d MB)", size>>20, c.Device.Name, c.Device.MaxAlloc>>20)
	}
	var code int32
	mem := c.a.createBuffer(c.ctx, flags, uintptr(size), nil, &code)
	if err := check("clCreateBuffer", code); err != nil {
		return nil, err
	}
	live.buffers.Add(1)
	return &Buffer{c: c, mem: mem, Size: size}, nil
}

// Release frees the buffer; a second call does nothing.
func (b *Buffer) Release() error {
	if b == nil || b.mem == 0 {
		return nil
	}
	err := check("clReleaseMemObject", b.c.a.releaseMem(b.mem))
	b.mem = 0
	live.buffers.Add(-1)
	return err
}

// ready checks a transfer of n bytes at byte offset off, and returns an
// injected failure.
func (b *Buffer) ready(verb string, off, n int) error {
	if off < 0 || off+n > b.Size {
		return fmt.Errorf("opencl: %s %d bytes at %d of a buffer of %d", verb, n, off, b.Size)
	}
	return b.c.injected()
}

// Write copies data to the buffer at byte offset off and waits for it.
func Write[T any](b *Buffer, off int, data []T) error {
	return transfer(b, off, data, "writing", "clEnqueueWriteBuffer", b.c.a.enqueueWrite)
}

// Read copies the buffer from byte offset off into data and waits for it.
func Read[T any](b *Buffer, off int, data []T) error {
	return transfer(b, off, data, "reading", "clEnqueueReadBuffer", b.c.a.enqueueRead)
}

// transfer copies between data and the buffer with enqueue, the queue's
// read or write, and waits for it.
func transfer[T any](b *Buffer, off int, data []T, verb, op string,
	enqueue func(q, mem uintptr, blocking uint32, offset, size uintptr, ptr unsafe.Pointer, n uint32, wait *uintptr, ev *uintptr) int32) error {
	if len(data) == 0 {
		return nil
	}
	n := len(data) * int(unsafe.Sizeof(data[0]))
	if err := b.ready(verb, off, n); err != nil {
		return err
	}
	err := check(op, enqueue(b.c.queue, b.mem, 1, uintptr(off), uintptr(n), unsafe.Pointer(&data[0]), 0, nil, nil))
	runtime.KeepAlive(data)
	return err
}

// Zero fills the buffer with zero bytes (queued, not waited for).
func (b *Buffer) Zero() error {
	if err := b.c.injected(); err != nil {
		return err
	}
	var zero uint32
	n := b.Size &^ 3
	if n == 0 {
		return nil
	}
	return check("clEnqueueFillBuffer", b.c.a.enqueueFill(b.c.queue, b.mem, unsafe.Pointer(&zero), 4, 0, uintptr(n), 0, nil, nil))
}

// Finish waits for every command queued.
func (c *Context) Finish() error {
	if err := c.injected(); err != nil {
		return err
	}
	return errors.Join(check("clFinish", c.a.finish(c.xfer)), check("clFinish", c.a.finish(c.down)), check("clFinish", c.a.finish(c.queue)))
}

// Event is a command in flight: a transfer or a kernel.
type Event struct {
	c  *Context
	ev uintptr
}

// Wait waits for the command, then releases the event.
func (e *Event) Wait() error {
	if e == nil || e.ev == 0 {
		return nil
	}
	err := check("clWaitForEvents", e.c.a.waitForEvents(1, &e.ev))
	return errors.Join(err, e.Release())
}

// Elapsed waits for the command and returns the time the device spent on
// it (0 where the driver does not say); the event stays the caller's to
// release.
func (e *Event) Elapsed() (time.Duration, error) {
	if e == nil || e.ev == 0 {
		return 0, nil
	}
	a := e.c.a
	if err := check("clWaitForEvents", a.waitForEvents(1, &e.ev)); err != nil {
		return 0, err
	}
	var start, end uint64
	if a.getProfilingInfo(e.ev, 0x1282, 8, unsafe.Pointer(&start), nil) != 0 || // CL_PROFILING_COMMAND_START
		a.getProfilingInfo(e.ev, 0x1283, 8, unsafe.Pointer(&end), nil) != 0 { // CL_PROFILING_COMMAND_END
		return 0, nil
	}
	return time.Duration(end - start), nil
}

// Release lets the driver forget the event; a second call does nothing.
func (e *Event) Release() error {
	if e == nil || e.ev == 0 {
		return nil
	}
	err := check("clReleaseEvent", e.c.a.releaseEvent(e.ev))
	e.ev = 0
	live.events.Add(-1)
	return err
}

// waitList is the OpenCL list of the events not yet released.
func waitList(events []*Event) (n uint32, list *uintptr) {
	ids := make([]uintptr, 0, len(events))
	for _, e := range events {
		if e != nil && e.ev != 0 {
			ids = append(ids, e.ev)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return uint32(len(ids)), &ids[0]
}

// WriteAsync copies data to the buffer at byte offset off on the upload
// queue, after the commands of after, and returns at once: kernels
// already queued run meanwhile. data must stay unchanged until the
// returned event is done.
func WriteAsync[T any](b *Buffer, off int, data []T, after ...*Event) (*Event, error) {
	return async(b, off, data, after, "writing", "clEnqueueWriteBuffer", b.c.xfer, b.c.a.enqueueWrite)
}

// ReadAsync copies the buffer from byte offset off into data on the
// download queue, after the commands of after, and returns at once. data
// must stay reachable, and be neither read nor written, until the
// returned event is done.
func ReadAsync[T any](b *Buffer, off int, data []T, after ...*Event) (*Event, error) {
	return async(b, off, data, after, "reading", "clEnqueueReadBuffer", b.c.down, b.c.a.enqueueRead)
}

// async queues a transfer of data on queue without waiting for it.
func async[T any](b *Buffer, off int, data []T, after []*Event, verb, op string, queue uintptr,
	enqueue func(q, mem uintptr, blocking uint32, offset, size uintptr, ptr unsafe.Pointer, n uint32, wait *uintptr, ev *uintptr) int32) (*Event, error) {
	n := len(data) * int(unsafe.Sizeof(*new(T)))
	if n == 0 {
		return nil, fmt.Errorf("opencl: an empty transfer")
	}
	if err := b.ready(verb, off, n); err != nil {
		return nil, err
	}
	nw, list := waitList(after)
	e := &Event{c: b.c}
	if err := check(op, enqueue(queue, b.mem, 0, uintptr(off), uintptr(n), unsafe.Pointer(&data[0]), nw, list, &e.ev)); err != nil {
		return nil, err
	}
	live.events.Add(1)
	return e, nil
}
