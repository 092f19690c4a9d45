package jpet

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestKeptPasses: the passes over kept values (the vector ones in a
// GOEXPERIMENT=simd build) give the bits of the portable code, and agree
// with a float64 evaluation of the formula to float32 rounding, for runs
// of every length up to 300 (split into runs of at most 16) and empty
// events.
func TestKeptPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const image = 4096
	for c := range 2000 {
		var st kernelStore
		st.budget = 1 << 30
		var cache []contribution
		for range r.IntN(20) {
			pix, n := r.IntN(image-300), 1+r.IntN(40)
			if c%10 == 0 {
				n = 1 + r.IntN(300)
			}
			st.addRun(pix, n)
			for q := range n {
				cache = append(cache, contribution{int32(pix + q), r.ExpFloat64()})
			}
		}
		st.keep(cache)
		b := st.blocks[0]
		rs := make([]float32, image+keptPad)
		for p := range rs {
			rs[p] = float32(r.Float64() * 3)
		}
		if c%7 == 0 {
			clear(rs) // a zero denominator adds nothing
		}
		acc, accGo := make([]float32, image+keptPad), make([]float32, image+keptPad)
		for p := range acc {
			acc[p] = float32(r.Float64())
			accGo[p] = acc[p]
		}
		before := slices.Clone(acc)
		ks := b.k[:len(b.k)+keptPad]
		inv, end := keptDenominator(ks, 0, b.runs, rs)
		invGo, endGo := keptDenominatorGo(b.k, 0, b.runs, rs)
		if inv != invGo || end != len(cache) || endGo != len(cache) {
			t.Fatalf("case %d: denominators %v (to %d), portable %v (to %d)", c, inv, end, invGo, endGo)
		}
		end, endGo = keptAdd(ks, 0, b.runs, float32(inv), acc), keptAddGo(b.k, 0, b.runs, float32(inv), accGo)
		if end != len(cache) || endGo != len(cache) || !slices.Equal(acc, accGo) {
			t.Fatalf("case %d: vector and portable additions differ", c)
		}
		var denom float64
		for _, x := range cache {
			denom += float64(float32(x.k)) * float64(rs[x.pix])
		}
		want := make([]float64, len(acc)) // runs may overlap
		for p, v := range before {
			want[p] = float64(v)
		}
		for _, x := range cache {
			if denom != 0 {
				want[x.pix] += float64(float32(x.k)) / denom
			}
		}
		for p, w := range want {
			if got := float64(acc[p]); math.Abs(got-w) > 1e-6*math.Abs(w) {
				t.Fatalf("case %d: pixel %d: %v, want %v", c, p, got, w)
			}
		}
	}
}

// TestKeptTinyActivity: kept iterations of an image scaled to 1e-33, and
// of one whose left half has 1e-42 of the activity of its right half
// (events there run in float64), agree with computed ones.
func TestKeptTinyActivity(t *testing.T) {
	s := PaperScanner().WithDefaults()
	sim, _ := Simulate(t.Context(), s, PaperPhantom(), SimOptions{Emissions: 5000, Seed: 2})
	run := func(cache int64, scale func(iz int) float64) []float64 {
		r, _ := NewReconstructor(s, sim.Events, Options{Workers: 2, KernelCache: cache})
		r.Iterate()
		for iz := range s.NZ {
			for iy := range s.NY {
				r.rho[r.at(iz, iy)] *= scale(iz)
			}
		}
		r.Iterate()
		return slices.Clone(r.Image())
	}
	for _, scale := range []func(int) float64{
		func(int) float64 { return 1e-33 },
		func(iz int) float64 { return map[bool]float64{true: 1e-42, false: 1}[iz < s.NZ/2] },
	} {
		want, got := run(0, scale), run(1<<30, scale)
		for p := range want {
			if math.Abs(got[p]-want[p]) > 1e-5*want[p] {
				t.Fatalf("pixel %d: %v kept, %v computed", p, got[p], want[p])
			}
		}
	}
}

// TestAnalyticValues: the analytic kernel along a column (vectors in a
// GOEXPERIMENT=simd build) agrees with the math package to 1e-14 for
// every column length.
func TestAnalyticValues(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for m := range 40 {
		a, b, n := make([]float64, m), make([]float64, m), make([]float64, m)
		for q := range m {
			n[q] = 0.5 + 10*r.Float64()
			b[q] = r.NormFloat64()
			a[q] = b[q]*b[q]/n[q] + 20*r.Float64()
		}
		got, want := make([]float64, m), make([]float64, m)
		analyticValues(3.5, a, b, n, got)
		analyticValuesGo(3.5, a, b, n, want)
		for q := range m {
			if math.Abs(got[q]-want[q]) > 1e-14*want[q] {
				t.Fatalf("length %d, pixel %d: %v, want %v", m, q, got[q], want[q])
			}
		}
	}
}

// TestKeptDeterministic: the kept passes on many more workers than
// cores, where workers wait for their chunk's slot, give the same bits run
// after run and for any number of workers (the chunks' images are added in
// chunk order whoever computes them).
func TestKeptDeterministic(t *testing.T) {
	s := PaperScanner().WithDefaults()
	sim, _ := Simulate(t.Context(), s, PaperPhantom(), SimOptions{Emissions: 30000, Seed: 3})
	r, _ := NewReconstructor(s, sim.Events, Options{Workers: 3, KernelCache: 1 << 30})
	r.Iterate()
	var k keptIterations
	k.build(r.stores)
	if len(k.chunks) < 40 {
		t.Fatalf("only %d chunks", len(k.chunks))
	}
	// A worker that has taken a chunk but waits long before claiming its
	// slot: the later chunk of the same slot must not take its turn.
	slow := func(c int) {
		if c == 8 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	var want []float64
	for i := range 150 {
		k.afterTake = nil
		if i%10 == 3 {
			k.afterTake = slow
		}
		events := 0
		k.iterate(r.rho, nil, 1+i%8, func(n int) { events += n })
		if events != len(sim.Events) {
			t.Fatalf("reported %d of %d events", events, len(sim.Events))
		}
		if i == 0 {
			want = slices.Clone(k.acc)
		} else if !slices.Equal(k.acc, want) {
			t.Fatalf("run %d on %d workers differs from one worker's", i, 1+i%8)
		}
	}
}
