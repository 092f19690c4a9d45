package textparts

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestWriteInOrder: for batch sizes around the part threshold and beyond
// a round of parts, the text written is every row once, in order; rows
// are split among goroutines only from 2*MinRows on, and no part formats
// more than MaxRows at once.
func TestWriteInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		writeInOrder(t, procs)
	}
}

func writeInOrder(t *testing.T, procs int) {
	var p Parts
	for _, n := range []int{0, 1, MinRows, 2*MinRows - 1, 2 * MinRows, 3*MinRows + 7, 4 * MinRows, 10*MinRows + 3, MaxRows + 1, 4 * MaxRows, 9*MaxRows + 5} {
		var calls atomic.Int32
		var got, want bytes.Buffer
		err := p.Write(&got, n, func(dst []byte, lo, hi int) []byte {
			calls.Add(1)
			if hi-lo > MaxRows {
				t.Errorf("%d rows: a part of %d", n, hi-lo)
			}
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
			t.Errorf("%d rows on %d Ps: %d bytes, want %d", n, procs, got.Len(), want.Len())
		}
		// A part of more than sampleRows rows is formatted in two calls.
		k := max(1, min(procs, n/MinRows))
		callsWant := 0
		for from := 0; from < n; from += k * MaxRows {
			m := min(n-from, k*MaxRows)
			for p := range k {
				callsWant += 1 + b2i((p+1)*m/k-p*m/k > sampleRows)
			}
		}
		if int(calls.Load()) != callsWant {
			t.Errorf("%d rows on %d Ps: %d calls, want %d", n, procs, calls.Load(), callsWant)
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
	for _, n := range []int{4 * MinRows, 9 * MaxRows} { // one round, and several
		w := &failing{}
		err := p.Write(w, n, func(dst []byte, lo, hi int) []byte { return append(dst, 'x') })
		if err == nil || err.Error() != "disk full" || w.writes != 1 {
			t.Fatalf("%d rows: error %v after %d writes, want disk full after 1", n, err, w.writes)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
