// Package ctxio stops reads once a context is done, so that a long read
// of a large input ends at the next block after Ctrl-C; and finds the
// size of what a reader reads, for readers that size their storage once.
package ctxio

import (
	"context"
	"errors"
	"io"
	"os"
)

// Reader reads from R until Ctx is done, then returns Ctx's error.
type Reader struct {
	Ctx context.Context
	R   io.Reader
}

func (c Reader) Read(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(p)
}

// Stat is R's, for readers that size their buffers by the file's size;
// an error when R has none.
func (c Reader) Stat() (os.FileInfo, error) {
	if f, ok := c.R.(interface{ Stat() (os.FileInfo, error) }); ok {
		return f.Stat()
	}
	return nil, errors.ErrUnsupported
}

// Size is the size of the regular file r reads (directly, or as the R of
// a Reader), or 0 for any other reader.
func Size(r io.Reader) int64 {
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return 0
}
