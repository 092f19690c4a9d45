package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/jpet/jpetcl"
)

// PET simulates events of the paper's phantom with the paper's set-up
// and times, for each kernel, the first MLEM iteration and the next
// iterations (the median is shown). On the CPU (dev nil) it runs on one
// worker and on all cores; the first iteration computes every kernel
// value and keeps as many as cache bytes allow, and the next ones read
// them. On an OpenCL device every iteration computes them, in double
// precision and with the kernel values in single (see jpetcl.Single).
func PET(ctx context.Context, events, iterations int, cache int64, dev *opencl.Context, stdout io.Writer) error {
	s := jpet.PaperScanner().WithDefaults()
	// About 80 % of the emissions are detected with angles in (-pi/4, pi/4).
	sim, err := jpet.Simulate(ctx, s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: events * 5 / 4, Seed: 1})
	if err != nil {
		return err
	}
	ev := sim.Events[:min(events, len(sim.Events))]
	header(stdout)
	if dev != nil {
		fmt.Fprintf(stdout, "Device: %s\n\n", dev.Device)
	}
	fmt.Fprintf(stdout, "| events | kernel | where | kept events | first iteration (s) | next iterations (s, median of %d) | ns per event |\n|---|---|---|---|---|---|---|\n", iterations)
	type run struct {
		label     string
		workers   int
		precision jpetcl.Precision
	}
	where := []run{{cpuWorkers(1), 1, jpetcl.Double}}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		where = append(where, run{cpuWorkers(n), n, jpetcl.Double})
	}
	if dev != nil {
		where = []run{{"device", 0, jpetcl.Double}, {"device, single precision", 0, jpetcl.Single}}
	}
	for _, kind := range []jpet.KernelKind{jpet.Analytic, jpet.Gaussian} {
		for _, w := range where {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			opt := jpet.Options{Kernel: kind, Workers: w.workers, KernelCache: cache}
			r, err := jpetcl.New(dev, s, ev, opt, w.precision)
			if err != nil {
				return err
			}
			var times []time.Duration
			for range 1 + iterations {
				t := time.Now()
				if err := r.Iterate(); err != nil {
					return errors.Join(err, r.Close())
				}
				times = append(times, time.Since(t))
			}
			if err := r.Close(); err != nil {
				return err
			}
			label, kept := w.label, fmt.Sprint(r.KeptEvents())
			if dev != nil {
				kept = "-"
			}
			next := slices.Clone(times[1:])
			slices.Sort(next)
			fmt.Fprintf(stdout, "| %d | %s | %s | %s | %.3f | %.3f | %.0f |\n", len(ev), map[jpet.KernelKind]string{jpet.Analytic: "analytic", jpet.Gaussian: "gaussian"}[kind],
				label, kept, times[0].Seconds(), next[len(next)/2].Seconds(), float64(next[len(next)/2].Nanoseconds())/float64(len(ev)))
			runtime.GC() // the kept values of the next run take their place
		}
	}
	return nil
}

// cpuWorkers labels a CPU run in the table.
func cpuWorkers(n int) string {
	if n == 1 {
		return "cpu, 1 worker"
	}
	return fmt.Sprintf("cpu, %d workers", n)
}
