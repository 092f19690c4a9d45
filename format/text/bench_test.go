package text

import (
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
)

// BenchmarkClusterCSVRows formats the rows of the cluster CSV on one
// goroutine, without writing them: the cost of the text itself.
func BenchmarkClusterCSVRows(b *testing.B) {
	all := fixture.Gamma()
	var buf []byte
	for b.Loop() {
		for lo := 0; lo < all.Len(); lo += 1 << 12 {
			buf = appendClusterRows(buf[:0], all, lo, min(all.Len(), lo+1<<12), Columns{})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(all.Len()), "ns/row")
}
