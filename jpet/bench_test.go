package jpet

import (
	"fmt"
	"testing"
)

// BenchmarkIteration times one MLEM iteration of 1e6 simulated events with
// the paper's set-up, computing the kernel every time and from kept values.
func BenchmarkIteration(b *testing.B) {
	s := PaperScanner().WithDefaults()
	sim, err := Simulate(b.Context(), s, PaperPhantom(), SimOptions{Emissions: 1250000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	events := sim.Events[:min(len(sim.Events), 1000000)]
	for _, cache := range []int64{0, 2 << 30} {
		for _, kind := range []KernelKind{Analytic, Gaussian} {
			for _, w := range []int{1, 2} {
				name := fmt.Sprintf("cache=%v/%s/workers=%d", cache > 0, map[KernelKind]string{Analytic: "analytic", Gaussian: "gaussian"}[kind], w)
				b.Run(name, func(b *testing.B) {
					r, err := NewReconstructor(s, events, Options{Kernel: kind, Workers: w, KernelCache: cache})
					if err != nil {
						b.Fatal(err)
					}
					r.Iterate() // warm-up, and the kernel values are kept
					b.ReportAllocs()
					for b.Loop() {
						r.Iterate()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
				})
			}
		}
	}
}

// BenchmarkKeptIteration times an iteration from kept kernel values on
// one worker (80,000 events of the paper's set-up, 70 MB of kept values).
func BenchmarkKeptIteration(b *testing.B) {
	s := PaperScanner().WithDefaults()
	sim, err := Simulate(b.Context(), s, PaperPhantom(), SimOptions{Emissions: 100000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReconstructor(s, sim.Events, Options{Workers: 1, KernelCache: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	r.Iterate()
	if r.CachedEvents() != len(sim.Events) {
		b.Fatal("not all events kept")
	}
	for b.Loop() {
		r.Iterate()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sim.Events)), "ns/event")
}
