package jpet

import (
	"math"
	"slices"
	"testing"
)

// accumulateReference is accumulate written pixel by pixel: per event a first
// pass over the ellipse computes the denominator (and keeps the kernel
// values), a second adds kernel*rho/denominator to each pixel.
func (r *Reconstructor) accumulateReference(events []prepared, acc []float64, cache []contribution) []contribution {
	s := r.s
	rho, sens := r.rho, r.sens
	kind := r.opt.Kernel
	for i := range events {
		e := &events[i]
		k := &e.k
		cache = cache[:0]
		var denom float64
		for iy := e.y0; iy < e.y1; iy++ {
			for iz := e.z0; iz < e.z1; iz++ {
				zc, yc := s.PixelCentre(iz, iy)
				dz, dy := zc-k.z, yc-k.y
				if !k.inside(dy, dz) {
					continue
				}
				pix := r.at(iz, iy)
				v := k.value(kind, dz, dy) * rho[pix]
				cache = append(cache, contribution{int32(pix), v})
				if sens != nil {
					denom += v * sens[pix]
				} else {
					denom += v
				}
			}
		}
		if denom == 0 {
			continue
		}
		for _, c := range cache {
			acc[c.pix] += c.k / denom
		}
	}
	return cache
}

// TestKernelCache: iterations from kept kernel values (float32) agree with
// computed ones to float32 precision, with the budget covering all, some
// or none of the events; progress counts every event once an iteration.
func TestKernelCache(t *testing.T) {
	s := PaperScanner().WithDefaults()
	sim, _ := Simulate(t.Context(), s, PaperPhantom(), SimOptions{Emissions: 20000, Seed: 8})
	run := func(budget int64) ([]float64, int) {
		last := 0
		progress := func(done int) {
			if done <= last {
				t.Errorf("progress went from %d to %d", last, done)
			}
			last = done
		}
		r, _ := NewReconstructor(s, sim.Events, Options{Workers: 2, KernelCache: budget, Sensitivity: true, Progress: progress})
		for range 4 {
			last = 0
			r.Iterate()
			if last != len(sim.Events) {
				t.Fatalf("budget %d: progress ended at %d of %d events", budget, last, len(sim.Events))
			}
		}
		return slices.Clone(r.Image()), r.CachedEvents()
	}
	want, none := run(0)
	if none != 0 {
		t.Fatal("kept kernels without a budget")
	}
	for _, budget := range []int64{1 << 20, 1 << 30} {
		got, kept := run(budget)
		if kept == 0 || budget == 1<<30 && kept != len(sim.Events) || budget == 1<<20 && kept == len(sim.Events) {
			t.Fatalf("budget %d kept %d of %d events", budget, kept, len(sim.Events))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-5*math.Max(want[i], 1e-3) {
				t.Fatalf("budget %d: pixel %d %v vs %v", budget, i, got[i], want[i])
			}
		}
	}
}

// TestAccumulateMatchesReference: the row-wise kernel (interval, row
// constants, stepped Gaussian) against the pixel-by-pixel twin.
func TestAccumulateMatchesReference(t *testing.T) {
	s := PaperScanner().WithDefaults()
	sim, _ := Simulate(t.Context(), s, PaperPhantom(), SimOptions{Emissions: 30000, Seed: 5, MaxAngle: 1.5})
	for _, opt := range []Options{{}, {Kernel: Gaussian}, {Sensitivity: true}, {Kernel: Gaussian, AuthorsBox: true}} {
		opt.Workers = 1
		r, _ := NewReconstructor(s, sim.Events, opt)
		for i := range r.rho { // a non-uniform image
			r.rho[i] = 1 + float64(i%7)
		}
		fast := make([]float64, len(r.rho))
		slow := make([]float64, len(r.rho))
		r.accumulate(r.events, fast, nil, &rowConsts{}, &kernelStore{})
		r.accumulateReference(r.events, slow, nil)
		for i := range fast {
			fast[i] *= r.rho[i] // accumulate leaves the factor rho to Iterate
			if math.Abs(fast[i]-slow[i]) > 1e-9*math.Max(slow[i], 1e-6) {
				t.Fatalf("%+v: pixel %d: %v vs %v", opt, i, fast[i], slow[i])
			}
		}
		if slices.Equal(fast, make([]float64, len(fast))) {
			t.Fatal("nothing accumulated")
		}
	}
}
