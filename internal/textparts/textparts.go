package textparts

import (
	"io"
	"runtime"
	"sync"
)

// Parts holds the buffers of a writer's parts, reused from batch to
// batch. The zero value is ready to use.
type Parts struct{ parts [][]byte }

// MinRows is the fewest rows worth a goroutine of their own.
const MinRows = 2048

// Write formats rows [0, n) with format, which appends the text of rows
// [lo, hi) to dst and returns it, and writes the text to w in row order.
// A batch of at least twice MinRows rows is split into equal parts, one a
// core; format must therefore be safe to call on disjoint ranges at once.
func (t *Parts) Write(w io.Writer, n int, format func(dst []byte, lo, hi int) []byte) error {
	k := max(1, min(runtime.GOMAXPROCS(0), n/MinRows))
	for len(t.parts) < k {
		t.parts = append(t.parts, nil)
	}
	if k == 1 {
		t.parts[0] = format(t.parts[0][:0], 0, n)
	} else {
		var wg sync.WaitGroup
		for p := range k {
			wg.Go(func() { t.parts[p] = format(t.parts[p][:0], p*n/k, (p+1)*n/k) })
		}
		wg.Wait()
	}
	for _, b := range t.parts[:k] {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
