package pipeline

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// BenchmarkMemory streams simulated .tpx3 runs of growing length through
// the whole pipeline into a discarded Parquet file and reports the largest
// heap seen: it must not grow with the input.
//
//	go test -run '^$' -bench Memory -benchtime 1x ./pixel/pipeline/
func BenchmarkMemory(b *testing.B) {
	d, _ := pixelsim.DatasetByName("gamma")
	for _, hits := range []int{2_000_000, 8_000_000} {
		for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked} {
			b.Run(fmt.Sprintf("%s/hits=%d", mode, hits), func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					pr, pw := io.Pipe()
					go func() {
						w, _ := tpx3.NewHitWriter(pw, tpx3.TPX3)
						err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: hits, Seed: 1, RateMHz: 10, Disorder: 50 * pixel.Microsecond}, w.Write)
						if err == nil {
							err = w.Close()
						}
						pw.CloseWithError(err)
					}()
					cw, _ := columnar.NewClusterParquet(io.Discard, columnar.Options{})
					layout, _ := tpx3.LayoutByName("single")
					var ms runtime.MemStats
					batches := 0
					_, err := Run(context.Background(), Job{
						Sources: []Source{{Name: "sim.tpx3", R: pr}}, Reader: tpx3.Options{Layout: layout},
						Unsorted: 500 * pixel.Microsecond, Cluster: pixel.DefaultConfig(), Mode: mode, Workers: 2, Clusters: cw,
						Progress: func(int64) {
							if batches++; batches%16 == 0 {
								runtime.ReadMemStats(&ms)
								peak = max(peak, ms.HeapInuse)
							}
						},
					})
					if err != nil {
						b.Fatal(err)
					}
					cw.Close()
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			})
		}
	}
}
