package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/hitflow/hitflow/jpet"
)

// PET simulates events of the paper's phantom with the paper's set-up
// and times, for each kernel on one worker and on all cores, the first
// MLEM iteration (which computes every kernel value and keeps as many as
// cache bytes allow) and the next five (which read the kept values; the
// median is shown).
func PET(ctx context.Context, events int, cache int64, stdout io.Writer) error {
	s := jpet.PaperScanner().WithDefaults()
	// About 80 % of the emissions are detected with angles in (-pi/4, pi/4).
	sim, err := jpet.Simulate(ctx, s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: events * 5 / 4, Seed: 1})
	if err != nil {
		return err
	}
	ev := sim.Events[:min(events, len(sim.Events))]
	header(stdout)
	fmt.Fprintf(stdout, "| events | kernel | workers | kept events | first iteration (s) | next iterations (s, median of 5) | ns per event |\n|---|---|---|---|---|---|---|\n")
	workers := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		workers = append(workers, n)
	}
	for _, kind := range []jpet.KernelKind{jpet.Analytic, jpet.Gaussian} {
		for _, w := range workers {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r, err := jpet.NewReconstructor(s, ev, jpet.Options{Kernel: kind, Workers: w, KernelCache: cache})
			if err != nil {
				return err
			}
			t := time.Now()
			r.Iterate()
			first := time.Since(t)
			var next []time.Duration
			for range 5 {
				t = time.Now()
				r.Iterate()
				next = append(next, time.Since(t))
			}
			slices.Sort(next)
			fmt.Fprintf(stdout, "| %d | %s | %d | %d | %.3f | %.3f | %.0f |\n", len(ev), map[jpet.KernelKind]string{jpet.Analytic: "analytic", jpet.Gaussian: "gaussian"}[kind],
				w, r.CachedEvents(), first.Seconds(), next[2].Seconds(), float64(next[2].Nanoseconds())/float64(len(ev)))
			r = nil
			runtime.GC() // the kept values of the next run take their place
		}
	}
	return nil
}
