package output

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// gammaClusters are the clusters of 1,000,000 simulated gamma hits, with
// their hits (about 410,000 clusters).
func gammaClusters() *pixel.Clusters {
	d, _ := pixelsim.DatasetByName("gamma")
	c, _ := pixel.NewClusterer(pixel.DefaultConfig())
	c.KeepMembers(true) // for ROOT's hit branches
	all := &pixel.Clusters{}
	all.Reset()
	pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: 1000000, Seed: 1, RateMHz: 10}, func(h *pixel.Hits) error {
		all.Append(c.Add(h))
		return nil
	})
	all.Append(c.Flush())
	return all
}

// BenchmarkReadROOT reads the ROOT file of gammaClusters back: through the
// child process that ReadClusters starts, and in this process, to show
// what the child costs.
func BenchmarkReadROOT(b *testing.B) {
	all := gammaClusters()
	name := filepath.Join(b.TempDir(), "c.root")
	writeClusters(b, name, all)
	for _, how := range []string{"child", "here"} {
		b.Run(how, func(b *testing.B) {
			for b.Loop() {
				var err error
				if how == "child" {
					_, err = ReadClusters(name)
				} else {
					err = readROOTHere("clusters", name).err()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(all.Len())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mclusters/s")
		})
	}
}

// BenchmarkClusterWriters writes the clusters of 1,000,000 gamma hits
// (about 410,000 clusters) in each format; the metric is clusters per
// second, written to io.Discard (ROOT to a temporary file).
func BenchmarkClusterWriters(b *testing.B) {
	all := gammaClusters()
	var batches []*pixel.Clusters
	for i := 0; i < all.Len(); i += 1 << 14 {
		batches = append(batches, slice(all, i, min(all.Len(), i+1<<14)))
	}
	for _, format := range []string{"csv", "parquet", "arrow", "root"} {
		b.Run(format, func(b *testing.B) {
			for b.Loop() {
				var w ClusterWriter
				switch format {
				case "csv":
					w, _ = NewClusterCSV(io.Discard)
				case "parquet":
					w, _ = NewClusterParquet(io.Discard)
				case "arrow":
					w, _ = NewClusterArrow(io.Discard)
				default:
					var err error
					if w, err = CreateClusterROOT(filepath.Join(b.TempDir(), "c.root")); err != nil {
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

// slice copies clusters [i, j), hits included.
func slice(c *pixel.Clusters, i, j int) *pixel.Clusters {
	s := &pixel.Clusters{}
	s.Reset()
	for k := i; k < j; k++ {
		one := &pixel.Clusters{}
		one.Reset()
		one.ID, one.Size, one.FirstToA, one.LastToA = c.ID[k:k+1], c.Size[k:k+1], c.FirstToA[k:k+1], c.LastToA[k:k+1]
		one.ToTSum, one.ESum, one.X, one.Y = c.ToTSum[k:k+1], c.ESum[k:k+1], c.X[k:k+1], c.Y[k:k+1]
		one.XMin, one.XMax, one.YMin, one.YMax, one.Max = c.XMin[k:k+1], c.XMax[k:k+1], c.YMin[k:k+1], c.YMax[k:k+1], c.Max[k:k+1]
		one.Members.AppendRange(&c.Members, c.Start[k], c.Start[k+1])
		one.Start = append(one.Start, one.Members.Len())
		s.Append(one)
	}
	return s
}

// BenchmarkClusterCSVRows formats the rows of the cluster CSV on one
// goroutine, without writing them: the cost of the text itself.
func BenchmarkClusterCSVRows(b *testing.B) {
	all := gammaClusters()
	var buf []byte
	for b.Loop() {
		for lo := 0; lo < all.Len(); lo += 1 << 12 {
			buf = appendClusterRows(buf[:0], all, lo, min(all.Len(), lo+1<<12))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(all.Len()), "ns/row")
}
