package textparts

import (
	"io"
	"runtime"
	"sync"

	"github.com/hitflow/hitflow/internal/prefault"
)

// Parts holds the buffers of a writer's parts, reused from batch to
// batch. The zero value is ready to use.
type Parts struct{ parts [2][][]byte } // a round's parts, and the next round's

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
// ranges at the same time. A batch of several rounds of parts has each
// round's text written while the next round is formatted: the writes,
// the kernel's copies into the file, would leave the cores idle.
func (t *Parts) Write(w io.Writer, n int, format func(dst []byte, lo, hi int) []byte) error {
	k := max(1, min(runtime.GOMAXPROCS(0), n/MinRows))
	for set := range t.parts {
		for len(t.parts[set]) < k {
			t.parts[set] = append(t.parts[set], nil)
		}
	}
	round := k * MaxRows
	if n == 0 {
		return nil
	}
	if n <= round {
		t.formatRound(0, n, k, format)
		return t.writeRound(w, 0, k)
	}
	var wg sync.WaitGroup
	start := func(set, from int) {
		m := min(n-from, round)
		for p := range k {
			wg.Go(func() { t.parts[set][p] = formatSized(t.parts[set][p][:0], from+p*m/k, from+(p+1)*m/k, format) })
		}
	}
	start(0, 0)
	for from, set := 0, 0; from < n; from, set = from+round, 1-set {
		wg.Wait()
		if from+round < n {
			start(1-set, from+round)
		}
		if err := t.writeRound(w, set, k); err != nil {
			wg.Wait()
			return err
		}
	}
	return nil
}

// formatRound formats the n rows of a batch of one round into the first
// set of k parts, the last part on this goroutine: one wake-up fewer.
func (t *Parts) formatRound(from, n, k int, format func(dst []byte, lo, hi int) []byte) {
	parts := t.parts[0]
	var wg sync.WaitGroup
	for p := range k - 1 {
		wg.Go(func() { parts[p] = formatSized(parts[p][:0], from+p*n/k, from+(p+1)*n/k, format) })
	}
	parts[k-1] = formatSized(parts[k-1][:0], from+(k-1)*n/k, from+n, format)
	wg.Wait()
}

// writeRound writes the text of the k parts of a set.
func (t *Parts) writeRound(w io.Writer, set, k int) error {
	for _, b := range t.parts[set][:k] {
		if _, err := w.Write(b); err != nil {
			return err
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
