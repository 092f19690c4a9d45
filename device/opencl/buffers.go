package opencl

import "errors"

// Buffers are named buffers kept from call to call and grown as needed,
// for a device package that runs the same steps again on inputs of other
// sizes. It is not safe for concurrent use.
type Buffers struct {
	c *Context
	m map[string]*Buffer
}

// NewBuffers returns an empty set of buffers on the device of c.
func (c *Context) NewBuffers() *Buffers { return &Buffers{c: c, m: map[string]*Buffer{}} }

// Get returns the buffer of that name with room for at least bytes (one
// at least): the last call's when large enough, else a new one an eighth
// larger, so that slowly growing inputs seldom reallocate. A new buffer's
// contents are undefined.
func (b *Buffers) Get(name string, bytes int) (*Buffer, error) {
	bytes = max(bytes, 1)
	if old := b.m[name]; old != nil {
		if old.Size >= bytes {
			return old, nil
		}
		delete(b.m, name)
		if err := old.Release(); err != nil {
			return nil, err
		}
	}
	buf, err := b.c.NewBuffer(bytes+bytes/8, ReadWrite)
	if err != nil {
		return nil, err
	}
	b.m[name] = buf
	return buf, nil
}

// Release frees every buffer; the set may be used again.
func (b *Buffers) Release() error {
	var errs []error
	for _, buf := range b.m {
		errs = append(errs, buf.Release())
	}
	clear(b.m)
	return errors.Join(errs...)
}
