package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/plot"
)

func newPetCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pet",
		Short: "Two-strip J-PET: simulation and list-mode MLEM reconstruction",
	}
	cmd.AddCommand(newPetSimulateCmd(stderr), newPetReconstructCmd(stdout, stderr))
	return cmd
}

// scannerFlags adds the geometry flags, in metres, with the paper's set-up
// as defaults.
func scannerFlags(f *pflag.FlagSet, s *jpet.Scanner) {
	*s = jpet.PaperScanner()
	f.Float64Var(&s.R, "radius", s.R, "half distance between the strips, m")
	f.Float64Var(&s.L, "length", s.L, "strip length, m")
	f.Float64Var(&s.Pixel, "pixel", s.Pixel, "pixel size, m")
	f.IntVar(&s.NZ, "nz", 0, "image columns along z (0: ceil(length/pixel))")
	f.IntVar(&s.NY, "ny", 0, "image rows along y (0: ceil(2 radius/pixel))")
	f.Float64Var(&s.SigmaZ, "sigma-z", s.SigmaZ, "resolution (sigma) of the hit positions along the strips, m")
	f.Float64Var(&s.SigmaDL, "sigma-dl", s.SigmaDL, "resolution (sigma) of the path difference dl, m")
}

func readPhantom(name string) (jpet.Phantom, error) {
	if name == "" {
		return jpet.PaperPhantom(), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return jpet.Phantom{}, err
	}
	defer f.Close()
	return jpet.ParsePhantom(f, name)
}

func writeNRRDFile(name string, img []float64, s jpet.Scanner) error {
	return outfile.Write(name, func(w io.Writer) error {
		return jpet.WriteNRRD(w, jpet.Image{Values: img, NZ: s.NZ, NY: s.NY, Pixel: s.Pixel})
	})
}

func newPetSimulateCmd(stderr io.Writer) *cobra.Command {
	var s jpet.Scanner
	var phantom, out string
	var emissions int
	var seed uint64
	var angle float64
	var text, parquet, quiet bool
	cmd := &cobra.Command{
		Use:   "simulate -o PREFIX",
		Short: "Simulate list-mode events from a phantom",
		Long: `Simulate emissions from a phantom (the paper's six ellipses by default, or
a file of "ellipse z y a b angle_deg activity" and "point z y activity"
lines, in metres), angles uniform in (-angle, angle), Gaussian resolution,
acceptance on the strips. Writes PREFIX.bin (float32 z_u z_d dl, the
authors' format), PREFIX.txt with --text, PREFIX.parquet with --parquet
(columns z_u, z_d, dl, float32 as in the binary format), and the images
PREFIX_emitted.nrrd, PREFIX_detected.nrrd and PREFIX_naive.nrrd.`,
		Example: `  hitflow pet simulate --emissions 1000000 --seed 1 -o phantom
  hitflow pet simulate --angle 90 --emissions 200000 -o A   # the authors' A.bin set-up`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("pet simulate needs -o PREFIX")
			}
			if !(angle > 0 && angle <= 90) {
				return usagef("--angle %v: want degrees in (0, 90]", angle)
			}
			if emissions < 0 {
				return usagef("--emissions %d: must not be negative", emissions)
			}
			s = s.WithDefaults()
			if err := s.Validate(); err != nil {
				return usageError{err}
			}
			outs := []outfile.Role{role("-o", out+".bin"), role("-o", out+"_emitted.nrrd"), role("-o", out+"_detected.nrrd"), role("-o", out+"_naive.nrrd")}
			if text {
				outs = append(outs, role("--text", out+".txt"))
			}
			if parquet {
				outs = append(outs, role("--parquet", out+".parquet"))
			}
			ctx := cmd.Context()
			if err := prepare(ctx, []outfile.Role{role("--phantom", phantom)}, outs...); err != nil {
				return err
			}
			ph, err := readPhantom(phantom)
			if err != nil {
				return err
			}
			start := time.Now()
			bar := newCountProgress(stderr, int64(emissions), "emissions", quiet)
			sim, err := jpet.Simulate(ctx, s, ph, jpet.SimOptions{Emissions: emissions, Seed: seed, MaxAngle: angle * math.Pi / 180,
				Progress: func(done int) { bar.Update(int64(done)) }})
			bar.Done()
			if errors.Is(err, context.Canceled) {
				return stopped(ctx, "nothing written")
			}
			if err != nil {
				return usageError{err}
			}
			if err := outfile.Write(out+".bin", func(w io.Writer) error { return jpet.WriteEvents(w, sim.Events) }); err != nil {
				return err
			}
			if text {
				if err := outfile.Write(out+".txt", func(w io.Writer) error { return writeEventsText(w, sim.Events) }); err != nil {
					return err
				}
			}
			if parquet {
				if err := outfile.Write(out+".parquet", func(w io.Writer) error { return columnar.WriteEvents(w, sim.Events) }); err != nil {
					return err
				}
			}
			for name, img := range map[string][]float64{"emitted": sim.Emitted, "detected": sim.Detected, "naive": sim.Naive} {
				if err := writeNRRDFile(out+"_"+name+".nrrd", img, s); err != nil {
					return err
				}
			}
			fmt.Fprintf(stderr, "emissions %d, detected %d, %.1f s; wrote %s.bin and images %dx%d\n",
				emissions, len(sim.Events), time.Since(start).Seconds(), out, s.NZ, s.NY)
			return nil
		},
	}
	f := cmd.Flags()
	scannerFlags(f, &s)
	f.StringVar(&phantom, "phantom", "", "phantom file (default: the paper's phantom)")
	f.IntVar(&emissions, "emissions", 1000000, "number of emitted pairs")
	f.Uint64Var(&seed, "seed", 1, "random seed")
	f.Float64Var(&angle, "angle", 45, "emission angles uniform in (-angle, angle) degrees")
	f.BoolVar(&text, "text", false, "also write the events as text")
	f.BoolVar(&parquet, "parquet", false, "also write the events as Parquet")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	f.StringVarP(&out, "output", "o", "", "output prefix")
	return cmd
}

func writeEventsText(w io.Writer, events []jpet.Event) error {
	b := bufio.NewWriterSize(w, 1<<20)
	for _, e := range events {
		fmt.Fprintf(b, "%g %g %g\n", float32(e.ZU), float32(e.ZD), float32(e.DL))
	}
	return b.Flush()
}

func newPetReconstructCmd(stdout, stderr io.Writer) *cobra.Command {
	var s jpet.Scanner
	var out, kernel, truth string
	var iterations, workers, every int
	var sensitivity, authorsBox, quiet bool
	var margin float64
	var cache int64
	cmd := &cobra.Command{
		Use:   "reconstruct EVENTS.bin|EVENTS.txt|EVENTS.parquet -o PREFIX",
		Short: "List-mode MLEM reconstruction",
		Long: `Reconstruct an image from list-mode events (the authors' float32 format)
with MLEM and the analytic kernel (or the Gaussian one), starting from 1
everywhere. Writes PREFIX.nrrd (float32) at the end and PREFIX_NN.png (the image with
axes in metres and a colour bar; NN with as many digits as the last
iteration) every --png-every iterations and after the last. Interrupted
(Ctrl-C, SIGTERM), it stops after the iteration under way and writes
PREFIX.nrrd of the last whole iteration. With --truth PHANTOM (or "paper") it prints the
normalised RMSE and the mean activity in each ellipse after each
iteration. --authors-box reproduces the authors' loop (with --kernel
gaussian and without --sensitivity their images come out to float32
round-off).`,
		Example: `  hitflow pet reconstruct phantom.bin --iterations 10 --truth paper -o rec
  hitflow pet reconstruct A.bin --iterations 10 --kernel gaussian --authors-box --radius 0.125 -o rA`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("pet reconstruct takes one event file, got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("pet reconstruct needs -o PREFIX")
			}
			if iterations < 1 {
				return usagef("--iterations must be at least 1")
			}
			if every < 0 {
				return usagef("--png-every must not be negative")
			}
			if workers < 0 {
				return usagef("--workers must not be negative")
			}
			if _, err := eventFormat(args[0]); err != nil {
				return err
			}
			opt := jpet.Options{Sensitivity: sensitivity, AuthorsBox: authorsBox, Workers: workers, KernelCache: cache}
			switch kernel {
			case "analytic":
			case "gaussian":
				opt.Kernel = jpet.Gaussian
			default:
				return usagef("unknown kernel %q (want analytic or gaussian)", kernel)
			}
			s = s.WithDefaults()
			if err := s.Validate(); err != nil {
				return usageError{err}
			}
			outs := []outfile.Role{role("-o", out+".nrrd")}
			for it := 1; it <= iterations; it++ {
				if every > 0 && (it%every == 0 || it == iterations) {
					outs = append(outs, role("-o", pngName(out, it, iterations)))
				}
			}
			ctx := cmd.Context()
			phantomFile := truth
			if truth == "paper" {
				phantomFile = ""
			}
			if err := prepare(ctx, append(positional(args[0]), role("--truth", phantomFile)), outs...); err != nil {
				return err
			}
			var ph *jpet.Phantom
			if truth != "" {
				p, err := readPhantom(phantomFile)
				if err != nil {
					return err
				}
				ph = &p
			}
			events, err := readEvents(ctx, args[0])
			if errors.Is(err, context.Canceled) {
				return stopped(ctx, "nothing written")
			}
			if err != nil {
				return err
			}
			events, rejected := s.Screen(events, margin)
			if len(events) == 0 {
				return fmt.Errorf("%s: no events to reconstruct (%d rejected as beyond the strips)", args[0], rejected)
			}
			var bar *progress
			opt.Progress = func(done int) { bar.Update(int64(done)) }
			r, err := jpet.NewReconstructor(s, events, opt)
			if err != nil {
				return usageError{err}
			}
			start := time.Now()
			done := 0
			for it := 1; it <= iterations && ctx.Err() == nil; it++ {
				t := time.Now()
				bar = newCountProgress(stderr, int64(len(events)), fmt.Sprintf("iteration %d: events", it), quiet)
				r.Iterate()
				bar.Done()
				done = it
				line := fmt.Sprintf("iteration %d: %.3f s", it, time.Since(t).Seconds())
				if ph != nil {
					q := jpet.Compare(s, ph, r.Image())
					line += fmt.Sprintf(", NRMSE %.4f, ellipse means %.3f (true %v)", q.NRMSE, q.Mean, q.True)
				}
				fmt.Fprintln(stderr, line)
				if every > 0 && (it%every == 0 || it == iterations) {
					title := fmt.Sprintf("%s: MLEM iteration %d of %d", filepath.Base(args[0]), it, iterations)
					if err := writePNG(pngName(out, it, iterations), r.Image(), s, title); err != nil {
						return err
					}
				}
			}
			// An interrupted run keeps the image of the last whole iteration:
			// a valid MLEM estimate, named as such.
			if done == 0 {
				return stopped(ctx, "nothing written")
			}
			if err := writeNRRDFile(out+".nrrd", r.Image(), s); err != nil {
				return err
			}
			if done < iterations {
				return stopped(ctx, fmt.Sprintf("%s.nrrd holds the image after iteration %d of %d", out, done, iterations))
			}
			fmt.Fprintf(stderr, "events %d (rejected %d, kernel values kept for %d), %d iterations, %.2f s; wrote %s.nrrd (%dx%d)\n",
				len(events), rejected, r.CachedEvents(), iterations, time.Since(start).Seconds(), out, s.NZ, s.NY)
			return nil
		},
	}
	f := cmd.Flags()
	scannerFlags(f, &s)
	f.IntVar(&iterations, "iterations", 10, "MLEM iterations")
	f.StringVar(&kernel, "kernel", "analytic", "kernel: analytic or gaussian")
	f.BoolVar(&sensitivity, "sensitivity", false, "weigh by the pixel sensitivity")
	f.BoolVar(&authorsBox, "authors-box", false, "reproduce the authors' event box (last row and column left out)")
	f.IntVar(&workers, "workers", 0, "workers (0: all cores)")
	f.IntVar(&every, "png-every", 1, "write a PNG every k iterations (0: none)")
	f.StringVar(&truth, "truth", "", `phantom file, or "paper", to measure the image against`)
	cacheFlag(f, &cache)
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	f.Float64Var(&margin, "off-strip", 5, "drop events with a hit beyond a strip end by more than this many sigma_z (negative: keep all)")
	f.StringVarP(&out, "output", "o", "", "output prefix")
	return cmd
}

// pngName numbers the image of an iteration with as many digits as the
// last one has (at least two), so that the names sort in order.
func pngName(prefix string, it, iterations int) string {
	return fmt.Sprintf("%s_%0*d.png", prefix, max(2, len(strconv.Itoa(iterations))), it)
}

// writePNG draws an iteration's image with its axes in metres and a
// colour bar.
func writePNG(name string, img []float64, s jpet.Scanner, title string) error {
	return outfile.Write(name, func(w io.Writer) error {
		return plot.Image(w, jpet.Image{Values: img, NZ: s.NZ, NY: s.NY, Pixel: s.Pixel}, title, "png")
	})
}

func newBenchPetCmd(stdout io.Writer) *cobra.Command {
	var events int
	var cache int64
	cmd := &cobra.Command{
		Use:   "pet",
		Short: "Time MLEM iterations on the paper's set-up",
		Long: `Simulate events of the paper's phantom with the paper's set-up (R = 0.125 m,
L = 0.3 m, 4 mm pixels, sigma_z 10 mm, sigma_dl 40 mm) and time, for each
kernel on 1 worker and on all cores, the first MLEM iteration (which
computes every kernel value, and keeps as many as --kernel-cache allows)
and the next five (which read the kept values; the median is shown).
Prints a Markdown table.`,
		Example: "  hitflow bench pet\n  hitflow bench pet --events 10000000\n  hitflow bench pet --kernel-cache 0",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if events < 1 {
				return usagef("--events must be positive")
			}
			ctx := cmd.Context()
			if err := prepare(ctx, nil); err != nil {
				return err
			}
			s := jpet.PaperScanner().WithDefaults()
			// About 80 % of the emissions are detected with angles in (-pi/4, pi/4).
			sim, err := jpet.Simulate(ctx, s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: events * 5 / 4, Seed: 1})
			if err != nil {
				return err
			}
			ev := sim.Events[:min(events, len(sim.Events))]
			benchHeader(stdout)
			fmt.Fprintf(stdout, "| events | kernel | workers | kept events | first iteration (s) | next iterations (s, median of 5) | ns per event |\n|---|---|---|---|---|---|---|\n")
			workers := []int{1}
			if n := workersOf(0); n > 1 {
				workers = append(workers, n)
			}
			for _, kind := range []jpet.KernelKind{jpet.Analytic, jpet.Gaussian} {
				for _, w := range workers {
					if ctx.Err() != nil {
						return stopped(ctx, "")
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
		},
	}
	cmd.Flags().IntVar(&events, "events", 1000000, "number of detected events")
	cacheFlag(cmd.Flags(), &cache)
	return cmd
}

// cacheFlag registers --kernel-cache.
func cacheFlag(f *pflag.FlagSet, cache *int64) {
	*cache = availableMemory() / 2
	f.Var(memoryFlag{cache}, "kernel-cache", "MiB to keep kernel values in between iterations (about 4.3 bytes a pixel of an event; 0: none), or auto: half the available memory")
	f.Lookup("kernel-cache").DefValue = "auto"
}

// eventFormat returns the format of an event file from its extension:
// .bin (the authors' float32 triples), .txt or .parquet.
func eventFormat(name string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".bin", ".txt", ".parquet":
		return ext, nil
	default:
		return "", usagef("%s: unknown event file extension %q (want .bin, .txt or .parquet)", name, ext)
	}
}

// readEvents reads events in the format the extension names, until ctx
// is done.
func readEvents(ctx context.Context, name string) ([]jpet.Event, error) {
	format, err := eventFormat(name)
	if err != nil {
		return nil, err
	}
	if format == ".parquet" {
		return columnar.ReadEvents(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if format == ".txt" {
		return jpet.ReadEventsText(ctxReader{ctx, f}, name)
	}
	return jpet.ReadEvents(ctxReader{ctx, f}, name)
}
