package pixel_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// benchSets are the clustering benchmarks' datasets: gamma at one cluster
// per microsecond, 45 degree pions and Pb ions at 90 degrees.
var benchSets = []struct {
	name string
	rate float64 // Mhit/s
}{{"gamma", 2.5}, {"pion45", 23}, {"pb90", 20}}

// simulated returns n sorted hits of a dataset at a rate, in batches of 64Ki.
func simulated(b *testing.B, dataset string, n int, rate float64) []*pixel.Hits {
	return simulatedDisorder(b, dataset, n, rate, 0)
}

func simulatedDisorder(b *testing.B, dataset string, n int, rate float64, disorder pixel.Time) []*pixel.Hits {
	d, err := pixelsim.DatasetByName(dataset)
	if err != nil {
		b.Fatal(err)
	}
	var batches []*pixel.Hits
	cur := &pixel.Hits{}
	err = pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: n, Seed: 1, RateMHz: rate, Disorder: disorder}, func(h *pixel.Hits) error {
		for i := 0; i < h.Len(); {
			j := min(h.Len(), i+(1<<16-cur.Len()))
			cur.AppendRange(h, i, j)
			i = j
			if cur.Len() == 1<<16 {
				batches = append(batches, cur)
				cur = &pixel.Hits{}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if cur.Len() > 0 {
		batches = append(batches, cur)
	}
	return batches
}

// BenchmarkCluster measures the sequential clusterer on sorted hits: the
// gamma set at one cluster per microsecond (2.5 Mhit/s) and the 45 degree
// pion set (mean size ~23). The metric Mhit/s is per core.
func BenchmarkCluster(b *testing.B) {
	for _, ds := range benchSets {
		batches := simulated(b, ds.name, 1<<22, ds.rate)
		for _, def := range []pixel.Definition{pixel.Local, pixel.Global, pixel.Window} {
			b.Run(fmt.Sprintf("%s/%s", ds.name, def), func(b *testing.B) {
				cfg := pixel.DefaultConfig()
				cfg.Definition = def
				c, err := pixel.NewClusterer(cfg)
				if err != nil {
					b.Fatal(err)
				}
				benchStream(b, batches, c)
			})
		}
	}
}

// BenchmarkParallel measures the parallel modes on the same sets, with
// one and two workers (local definition).
func BenchmarkParallel(b *testing.B) {
	for _, ds := range benchSets {
		batches := simulated(b, ds.name, 1<<22, ds.rate)
		for _, mode := range []pixel.Mode{pixel.LanesMode, pixel.Chunked} {
			for _, workers := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%v/workers=%d", ds.name, mode, workers), func(b *testing.B) {
					c, err := pixel.NewStream(pixel.DefaultConfig(), mode, workers)
					if err != nil {
						b.Fatal(err)
					}
					benchStream(b, batches, c)
				})
			}
		}
	}
}

// benchStream clusters the batches again and again, each repetition
// shifted in time after the previous one, as the paper does.
func benchStream(b *testing.B, batches []*pixel.Hits, c interface {
	Add(*pixel.Hits) *pixel.Clusters
	Flush() *pixel.Clusters
}) {
	repeatShifted(b, batches, pixel.Millisecond, func(h *pixel.Hits) { c.Add(h) })
	c.Flush()
}

// BenchmarkSorter measures the reorder stage through a 500 us window on
// gamma hits: at one cluster per microsecond, sorted and read out with up
// to 100 us of disorder; and as the end-to-end runs read them from .tpx3
// files, at 10 Mhit/s with up to 50 us of disorder and times in the
// readout's steps of 1.5625 ns; and on the real four-chip background run
// of ../shared/data, in its own order (88 % of its hits in order).
func BenchmarkSorter(b *testing.B) {
	b.Run("real", func(b *testing.B) {
		batches := realReadout(b)
		s, _ := pixel.NewSorter(500*pixel.Microsecond, 0)
		repeatShifted(b, batches, pixel.Second, func(h *pixel.Hits) { s.Push(h) })
	})
	for _, set := range []struct {
		name     string
		rate     float64
		disorder pixel.Time
		step     pixel.Time
	}{
		{"disorder=0us", 2.5, 0, 1},
		{"disorder=100us", 2.5, 100 * pixel.Microsecond, 1},
		{"tpx3", 10, 50 * pixel.Microsecond, 25 * pixel.Nanosecond / 16},
	} {
		batches := simulatedDisorder(b, "gamma", 1<<20, set.rate, set.disorder)
		for _, h := range batches {
			for i, t := range h.ToA {
				h.ToA[i] = t - t%set.step
			}
		}
		b.Run(set.name, func(b *testing.B) {
			s, _ := pixel.NewSorter(500*pixel.Microsecond, 0)
			repeatShifted(b, batches, pixel.Second, func(h *pixel.Hits) { s.Push(h) })
		})
	}
}

// repeatShifted feeds the batches to add for every benchmark iteration,
// each repetition shifted to start gap after the previous one ended, and
// reports Mhit/s.
func repeatShifted(b *testing.B, batches []*pixel.Hits, gap pixel.Time, add func(*pixel.Hits)) {
	last := batches[len(batches)-1]
	span := last.ToA[last.Len()-1] + gap
	var offset pixel.Time
	hits := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// Each batch moves on to its time in the next repetition once it
		// is clustered: one pass over its times, which the measurement
		// cannot avoid, rather than a shift there and one back.
		for _, h := range batches {
			add(h)
			shift(h, span)
			hits += h.Len()
		}
		offset += span
	}
	b.ReportMetric(float64(hits)/b.Elapsed().Seconds()/1e6, "Mhit/s")
	for _, h := range batches { // the next benchmark gets them as simulated
		shift(h, -offset)
	}
}

func shift(h *pixel.Hits, by pixel.Time) {
	for i := range h.ToA {
		h.ToA[i] += by
	}
}

// BenchmarkManyOpenClusters measures every mode on clusters that do not
// end: every other pixel of every other row fires in turn, 128 times,
// within a dt of a second; 16 K clusters each spanning the whole stream
// of 2 M hits.
func BenchmarkManyOpenClusters(b *testing.B) {
	var batches []*pixel.Hits
	cur := &pixel.Hits{}
	t := pixel.Time(0)
	for range 128 {
		for y := 0; y < 256; y += 2 {
			for x := 0; x < 256; x += 2 {
				cur.Append(uint16(x), uint16(y), t, 10)
				t += 25 * pixel.Nanosecond
				if cur.Len() == 1<<16 {
					batches = append(batches, cur)
					cur = &pixel.Hits{}
				}
			}
		}
	}
	cfg := pixel.DefaultConfig()
	cfg.Dt = pixel.Second
	for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked} {
		b.Run(mode.String(), func(b *testing.B) {
			hits := 0
			b.ReportAllocs()
			for b.Loop() {
				c, err := pixel.NewStream(cfg, mode, 2)
				if err != nil {
					b.Fatal(err)
				}
				for _, h := range batches {
					c.Add(h)
					hits += h.Len()
				}
				if n := c.Flush().Len(); n != 128*128 {
					b.Fatalf("%d clusters", n)
				}
			}
			b.ReportMetric(float64(hits)/b.Elapsed().Seconds()/1e6, "Mhit/s")
		})
	}
}

// realReadout returns the hits of the four-chip background run of
// ../shared/data/tpx3 in the file's order, in batches of 64Ki, or skips
// when the data are absent.
func realReadout(b *testing.B) []*pixel.Hits {
	const name = "../../shared/data/tpx3/suann_socket_background_serval32.tpx3"
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		b.Skipf("shared data %s not present; skipping", name)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	layout, _ := tpx3.LayoutByName("quad")
	r := tpx3.NewRawReader(f, name, layout)
	var all, h pixel.Hits
	for {
		err := r.Read(&h)
		all.AppendRange(&h, 0, h.Len())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if all.Len() != 98548 {
		b.Fatalf("%d hits read, want 98548", all.Len())
	}
	var batches []*pixel.Hits
	for i := 0; i < all.Len(); i += 1 << 16 {
		h := &pixel.Hits{}
		h.AppendRange(&all, i, min(all.Len(), i+1<<16))
		batches = append(batches, h)
	}
	return batches
}
