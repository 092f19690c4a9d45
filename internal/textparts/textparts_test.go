package textparts

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestWriteInOrder: for batch sizes around the part threshold, the text
// written is every row once, in order, and rows are split among
// goroutines only from 2*MinRows on.
func TestWriteInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var p Parts
	for _, n := range []int{0, 1, MinRows, 2*MinRows - 1, 2 * MinRows, 3*MinRows + 7, 4 * MinRows, 10*MinRows + 3} {
		var calls atomic.Int32
		var got, want bytes.Buffer
		err := p.Write(&got, n, func(dst []byte, lo, hi int) []byte {
			calls.Add(1)
			for i := lo; i < hi; i++ {
				dst = fmt.Appendf(dst, "%d\n", i)
			}
			return dst
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			fmt.Fprintf(&want, "%d\n", i)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d rows: %d bytes, want %d", n, got.Len(), want.Len())
		}
		if parts := max(1, min(4, n/MinRows)); int(calls.Load()) != parts {
			t.Errorf("%d rows: %d parts, want %d", n, calls.Load(), parts)
		}
	}
}

type failing struct{ writes int }

func (f *failing) Write(b []byte) (int, error) {
	f.writes++
	return 0, errors.New("disk full")
}

// TestWriteError: the first failed write is returned, and the parts after
// it are not written.
func TestWriteError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var p Parts
	w := &failing{}
	err := p.Write(w, 4*MinRows, func(dst []byte, lo, hi int) []byte { return append(dst, 'x') })
	if err == nil || err.Error() != "disk full" || w.writes != 1 {
		t.Fatalf("error %v after %d writes, want disk full after 1", err, w.writes)
	}
}
