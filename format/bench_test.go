package format

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/format/root"
	"github.com/hitflow/hitflow/format/text"
	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel"
)

// BenchmarkClusterWriters writes the clusters of 1,000,000 gamma hits
// (about 410,000 clusters) in each format; the metric is clusters per
// second, written to io.Discard (ROOT to a temporary file).
func BenchmarkClusterWriters(b *testing.B) {
	all := fixture.Gamma()
	var batches []*pixel.Clusters
	for i := 0; i < all.Len(); i += 1 << 14 {
		batches = append(batches, fixture.Slice(all, i, min(all.Len(), i+1<<14)))
	}
	for _, format := range []string{"csv", "parquet", "arrow", "root"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				var w ClusterWriter
				switch format {
				case "csv":
					w, _ = text.NewClusterCSV(io.Discard, text.Columns{})
				case "parquet":
					w, _ = columnar.NewClusterParquet(io.Discard, columnar.Options{})
				case "arrow":
					w, _ = columnar.NewClusterArrow(io.Discard, columnar.Options{})
				default:
					var err error
					if w, err = root.CreateClusters(filepath.Join(b.TempDir(), "c.root"), root.Columns{}); err != nil {
						b.Fatal(err)
					}
				}
				for _, batch := range batches {
					w.Write(batch)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(all.Len())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mclusters/s")
		})
	}
}
