package pixelsim

import (
	"math"
	"slices"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// clusterSizes simulates a dataset and clusters it exactly.
func clusterSizes(t *testing.T, opt Options) (mean, std float64, n int) {
	t.Helper()
	c, err := pixel.NewClusterer(pixel.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var sizes []float64
	collect := func(cl *pixel.Clusters) {
		for _, s := range cl.Size {
			sizes = append(sizes, float64(s))
		}
	}
	err = Generate(opt, func(h *pixel.Hits) error {
		collect(c.Add(h))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	collect(c.Flush())
	for _, s := range sizes {
		mean += s
	}
	mean /= float64(len(sizes))
	for _, s := range sizes {
		std += (s - mean) * (s - mean)
	}
	return mean, math.Sqrt(std / float64(len(sizes))), len(sizes)
}

func TestDatasetSizes(t *testing.T) {
	for _, d := range Datasets {
		hits := 400000
		if testing.Short() {
			hits = max(50000, int(50*d.MeanSize)) // at least 50 clusters
		}
		mean, std, n := clusterSizes(t, Options{Dataset: d, Hits: hits, Seed: 1, RateMHz: 0.05})
		t.Logf("%-8s mean %7.2f std %7.2f over %d clusters; paper: %s", d.Name, mean, std, n, d.Paper)
		tol := 0.1
		if testing.Short() {
			tol = 0.3
		}
		if math.Abs(mean-d.MeanSize) > tol*d.MeanSize {
			t.Errorf("%s: mean cluster size %.2f, the paper's %.2f", d.Name, mean, d.MeanSize)
		}
	}
}

func TestReproducibleAndOrdered(t *testing.T) {
	run := func(seed uint64, disorder pixel.Time) pixel.Hits {
		var all pixel.Hits
		err := Generate(Options{Dataset: Datasets[1], Hits: 100000, Seed: seed, RateMHz: 40, Disorder: disorder}, func(h *pixel.Hits) error {
			all.AppendRange(h, 0, h.Len())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	a, b, c := run(3, 0), run(3, 0), run(4, 0)
	if a.Len() != 100000 || !slices.Equal(a.ToA, b.ToA) || !slices.Equal(a.X, b.X) || slices.Equal(a.ToA, c.ToA) {
		t.Fatal("same seed must give the same stream, another seed another")
	}
	if !slices.IsSorted(a.ToA) {
		t.Fatal("stream without disorder is not sorted")
	}
	const window = 50 * pixel.Microsecond
	d := run(3, window)
	if slices.IsSorted(d.ToA) {
		t.Fatal("disorder had no effect")
	}
	maxSoFar := d.ToA[0]
	for i, t0 := range d.ToA {
		if t0 < maxSoFar-window {
			t.Fatalf("hit %d is %v ns before an earlier hit: not %v-ordered", i, (maxSoFar - t0).Ns(), window.Ns())
		}
		maxSoFar = max(maxSoFar, t0)
	}
	ds, as := slices.Clone(d.ToA), slices.Clone(a.ToA)
	slices.Sort(ds)
	if !slices.Equal(ds, as) {
		t.Fatal("disorder changed the hits, not only their order")
	}
}
