package pixel

import (
	"math/rand/v2"
	"slices"
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
