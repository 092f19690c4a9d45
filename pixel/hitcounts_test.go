package pixel

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestHitCounts compares the counts and the hot pixels with a plain map
// and a direct median, on random hit maps with a few hot pixels, ties and
// hits outside the sensor.
func TestHitCounts(t *testing.T) {
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 4))
		w, h := 1+r.IntN(30), 1+r.IntN(30)
		c, err := NewHitCounts(w, h)
		if err != nil {
			t.Fatal(err)
		}
		want := map[[2]int]int64{}
		var outside int64
		var hits Hits
		for range r.IntN(4) + 1 { // batches
			hits.Reset()
			for range r.IntN(2000) {
				x, y := r.IntN(w+2), r.IntN(h+2)
				if r.IntN(4) == 0 { // hot pixels: the first few
					x, y = r.IntN(min(w, 3)), 0
				}
				hits.Append(uint16(x), uint16(y), 0, 1)
				if x >= w || y >= h {
					outside++
				} else {
					want[[2]int{x, y}]++
				}
			}
			outside -= c.Add(&hits)
		}
		if outside != 0 {
			t.Fatalf("seed %d: outside off by %d", seed, outside)
		}
		var fired []int64
		for y := -1; y <= h; y++ {
			for x := -1; x <= w; x++ {
				if got := c.Count(x, y); got != want[[2]int{x, y}] {
					t.Fatalf("seed %d: pixel (%d, %d): %d hits, want %d", seed, x, y, got, want[[2]int{x, y}])
				}
			}
		}
		for _, n := range want {
			fired = append(fired, n)
		}
		sort.Slice(fired, func(i, j int) bool { return fired[i] < fired[j] })
		var median float64
		switch n := len(fired); {
		case n == 0:
		case n%2 == 1:
			median = float64(fired[n/2])
		default:
			median = float64(fired[n/2-1]+fired[n/2]) / 2
		}
		factor, least := float64(r.IntN(6)), int64(r.IntN(50))
		var wantHot []PixelHits
		for y := range h {
			for x := range w {
				if n := want[[2]int{x, y}]; n >= least && float64(n) > factor*median {
					wantHot = append(wantHot, PixelHits{x, y, n})
				}
			}
		}
		sort.SliceStable(wantHot, func(i, j int) bool { return wantHot[i].Hits > wantHot[j].Hits })
		hot, m := c.Hot(factor, least)
		if m != median || !slices.Equal(hot, wantHot) {
			t.Fatalf("seed %d: hot %v median %g, want %v median %g", seed, hot, m, wantHot, median)
		}
	}
}

func TestHitCountsEmpty(t *testing.T) {
	c, _ := NewHitCounts(4, 4)
	if hot, m := c.Hot(0, 0); hot != nil || m != 0 {
		t.Fatalf("hot %v median %g", hot, m)
	}
	if _, err := NewHitCounts(0, 4); err == nil {
		t.Fatal("no error for a 0x4 sensor")
	}
}
