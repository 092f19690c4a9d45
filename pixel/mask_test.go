package pixel

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestMaskFilter compares Filter with a plain copy of the hits whose pixel
// is not in a list of masked pixels, on random batches and masks: none,
// every pixel, a few, hits outside the sensor, with and without energies.
func TestMaskFilter(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 9))
		w, h := 1+r.IntN(40), 1+r.IntN(40)
		m, err := NewMask(w, h)
		if err != nil {
			t.Fatal(err)
		}
		masked := map[[2]int]bool{}
		switch many := r.IntN(5); {
		case seed == 0: // none
		case seed == 1 || many == 0: // all
			for y := range h {
				for x := range w {
					masked[[2]int{x, y}] = true
				}
			}
		default:
			for range r.IntN(1 + w*h/many) {
				masked[[2]int{r.IntN(w), r.IntN(h)}] = true
			}
		}
		for p := range masked {
			if err := m.Set(p[0], p[1]); err != nil {
				t.Fatal(err)
			}
		}
		// Set twice: counted once.
		for p := range masked {
			m.Set(p[0], p[1])
			break
		}
		if m.Pixels() != len(masked) {
			t.Fatalf("seed %d: %d pixels, want %d", seed, m.Pixels(), len(masked))
		}
		var hits, want Hits
		calibrated := r.IntN(2) == 0
		for i := range r.IntN(3000) {
			x, y := uint16(r.IntN(w+3)), uint16(r.IntN(h+3)) // some outside
			hits.Append(x, y, Time(i), uint16(r.IntN(1000)))
			if calibrated {
				hits.E = append(hits.E, r.Float32())
			}
			if !masked[[2]int{int(x), int(y)}] {
				want.AppendFrom(&hits, i)
			}
			if m.Has(int(x), int(y)) != masked[[2]int{int(x), int(y)}] {
				t.Fatalf("seed %d: Has(%d, %d) = %v", seed, x, y, !masked[[2]int{int(x), int(y)}])
			}
		}
		n := hits.Len()
		if got := m.Filter(&hits); got != n-want.Len() {
			t.Fatalf("seed %d: removed %d, want %d", seed, got, n-want.Len())
		}
		if !slices.Equal(hits.X, want.X) || !slices.Equal(hits.Y, want.Y) || !slices.Equal(hits.ToA, want.ToA) ||
			!slices.Equal(hits.ToT, want.ToT) || !slices.Equal(hits.E, want.E) {
			t.Fatalf("seed %d: the hits kept differ", seed)
		}
	}
}

func TestMaskErrors(t *testing.T) {
	for _, size := range [][2]int{{0, 5}, {5, 0}, {1<<16 + 1, 1}, {-1, 3}} {
		if _, err := NewMask(size[0], size[1]); err == nil {
			t.Errorf("NewMask(%d, %d): no error", size[0], size[1])
		}
	}
	m, _ := NewMask(4, 3)
	for _, p := range [][2]int{{4, 0}, {0, 3}, {-1, 0}, {0, -1}} {
		if err := m.Set(p[0], p[1]); err == nil || m.Has(p[0], p[1]) {
			t.Errorf("Set(%d, %d): no error", p[0], p[1])
		}
	}
	if m.Pixels() != 0 {
		t.Fatalf("%d pixels after failed sets", m.Pixels())
	}
	if w, h := m.Size(); w != 4 || h != 3 {
		t.Fatalf("size %dx%d", w, h)
	}
}

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
		// The fired rectangle against the pixels counted.
		x0, y0, x1, y1, ok := c.Fired()
		wx0, wy0, wx1, wy1 := w, h, -1, -1
		for p := range want {
			wx0, wy0, wx1, wy1 = min(wx0, p[0]), min(wy0, p[1]), max(wx1, p[0]), max(wy1, p[1])
		}
		if ok != (len(want) > 0) || ok && [4]int{x0, y0, x1, y1} != [4]int{wx0, wy0, wx1, wy1} {
			t.Fatalf("seed %d: fired %v %d,%d-%d,%d, want %d,%d-%d,%d", seed, ok, x0, y0, x1, y1, wx0, wy0, wx1, wy1)
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
	if _, _, _, _, ok := c.Fired(); ok {
		t.Fatal("an empty count fired")
	}
	if hot, m := c.Hot(0, 0); hot != nil || m != 0 {
		t.Fatalf("hot %v median %g", hot, m)
	}
	if _, err := NewHitCounts(0, 4); err == nil {
		t.Fatal("no error for a 0x4 sensor")
	}
}
