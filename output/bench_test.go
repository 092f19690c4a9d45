package output

import (
	"io"
	"testing"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// BenchmarkClusterWriters writes the clusters of 1,000,000 gamma hits
// (about 410,000 clusters) in each format; the metric is clusters per
// second, written to io.Discard.
func BenchmarkClusterWriters(b *testing.B) {
	d, _ := pixelsim.DatasetByName("gamma")
	c, _ := pixel.NewClusterer(pixel.DefaultConfig())
	all := &pixel.Clusters{}
	all.Reset()
	pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: 1000000, Seed: 1, RateMHz: 10}, func(h *pixel.Hits) error {
		all.Append(c.Add(h))
		return nil
	})
	all.Append(c.Flush())
	for _, format := range []string{"csv", "parquet"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				var w ClusterWriter
				if format == "csv" {
					w, _ = NewClusterCSV(io.Discard)
				} else {
					w, _ = NewClusterParquet(io.Discard)
				}
				for i := 0; i < all.Len(); i += 1 << 14 {
					w.Write(slice(all, i, min(all.Len(), i+1<<14)))
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(all.Len())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mclusters/s")
		})
	}
}

// slice copies clusters [i, j).
func slice(c *pixel.Clusters, i, j int) *pixel.Clusters {
	s := &pixel.Clusters{}
	s.Reset()
	s.ID, s.Size, s.FirstToA, s.LastToA = c.ID[i:j], c.Size[i:j], c.FirstToA[i:j], c.LastToA[i:j]
	s.ToTSum, s.ESum, s.X, s.Y = c.ToTSum[i:j], c.ESum[i:j], c.X[i:j], c.Y[i:j]
	s.XMin, s.XMax, s.YMin, s.YMax, s.Max = c.XMin[i:j], c.XMax[i:j], c.YMin[i:j], c.YMax[i:j], c.Max[i:j]
	return s
}
