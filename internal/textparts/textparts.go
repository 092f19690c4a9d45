package textparts

import (
	"io"
	"runtime"
	"sync"

	"github.com/hitflow/hitflow/internal/prefault"
)

// Parts holds the buffers of a writer's parts, reused from batch to
// batch. The zero value is ready to use.
type Parts struct{ parts [][]byte }

// MinRows is the fewest rows worth a goroutine of their own.
const MinRows = 2048

// BufferSize is the size of the buffered writer to give Write: small
// enough that a part's text, written through it, goes mostly straight to
// the file rather than being copied into the buffer first, large enough
// for the small batches of a live stream.
const BufferSize = 64 << 10

// MaxRows is the most rows a part formats before the text is written, so
// that the buffers stay small however large the batch.
const MaxRows = 1 << 16

// Write formats rows [0, n) with format, which appends the text of rows
// [lo, hi) to dst and returns it, and writes the text to w in row order.
// A batch of at least twice MinRows rows is split into parts formatted at
// once, one a core; format must therefore be safe to call on disjoint
// ranges at the same time.
func (t *Parts) Write(w io.Writer, n int, format func(dst []byte, lo, hi int) []byte) error {
	k := max(1, min(runtime.GOMAXPROCS(0), n/MinRows))
	for len(t.parts) < k {
		t.parts = append(t.parts, nil)
	}
	for from := 0; from < n; from += k * MaxRows {
		m := min(n-from, k*MaxRows) // the rows of this round
		if k == 1 {
			t.parts[0] = formatSized(t.parts[0][:0], from, from+m, format)
		} else {
			// The last part on this goroutine: one wake-up fewer a round.
			var wg sync.WaitGroup
			for p := range k - 1 {
				wg.Go(func() { t.parts[p] = formatSized(t.parts[p][:0], from+p*m/k, from+(p+1)*m/k, format) })
			}
			t.parts[k-1] = formatSized(t.parts[k-1][:0], from+(k-1)*m/k, from+m, format)
			wg.Wait()
		}
		for _, b := range t.parts[:k] {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// sampleRows is how many rows formatSized formats to learn their length.
const sampleRows = 1024

// formatSized formats rows [lo, hi) after dst, first a sample of them,
// then, with dst grown once to the length the sample foretells (and an
// eighth more), the rest: growing by append's steps would copy the text
// of a part several times over, a fifth of the time of formatting it.
// The parts' buffers stay for the writer's life: a large one is made of
// huge pages.
func formatSized(dst []byte, lo, hi int, format func(dst []byte, lo, hi int) []byte) []byte {
	mid := min(hi, lo+sampleRows)
	n := len(dst)
	dst = format(dst, lo, mid)
	if mid == hi {
		return dst
	}
	dst = prefault.Grow(dst, (len(dst)-n)*(hi-mid)/(mid-lo)*9/8)
	return format(dst, mid, hi)
}
