package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/output"
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
	f.Float64Var(&s.R, "radius", s.R, "half distance between the strips")
	f.Float64Var(&s.L, "length", s.L, "strip length")
	f.Float64Var(&s.Pixel, "pixel", s.Pixel, "pixel size")
	f.IntVar(&s.NZ, "nz", 0, "image columns along z (0: ceil(length/pixel))")
	f.IntVar(&s.NY, "ny", 0, "image rows along y (0: ceil(2 radius/pixel))")
	f.Float64Var(&s.SigmaZ, "sigma-z", s.SigmaZ, "resolution of the hit positions")
	f.Float64Var(&s.SigmaDL, "sigma-dl", s.SigmaDL, "resolution of the path difference")
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
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := jpet.WriteNRRD(f, jpet.Image{Values: img, NZ: s.NZ, NY: s.NY, Pixel: s.Pixel}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
		RunE: func(*cobra.Command, []string) error {
			if out == "" {
				return usagef("pet simulate needs -o PREFIX")
			}
			ph, err := readPhantom(phantom)
			if err != nil {
				return err
			}
			s = s.WithDefaults()
			if err := s.Validate(); err != nil {
				return usageError{err}
			}
			start := time.Now()
			bar := newCountProgress(stderr, int64(emissions), "emissions", quiet)
			sim, err := jpet.Simulate(s, ph, jpet.SimOptions{Emissions: emissions, Seed: seed, MaxAngle: angle * math.Pi / 180,
				Progress: func(done int) { bar.Update(int64(done)) }})
			bar.Done()
			if err != nil {
				return usageError{err}
			}
			f, err := os.Create(out + ".bin")
			if err != nil {
				return err
			}
			if err := jpet.WriteEvents(f, sim.Events); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			if text {
				if err := writeEventsText(out+".txt", sim.Events); err != nil {
					return err
				}
			}
			if parquet {
				if err := writeEventsParquet(out+".parquet", sim.Events); err != nil {
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

func writeEventsText(name string, events []jpet.Event) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "%g %g %g\n", float32(e.ZU), float32(e.ZD), float32(e.DL))
	}
	if _, err := io.WriteString(f, b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
everywhere. Writes PREFIX.nrrd (float32) at the end and PREFIX_NN.png every
--png-every iterations. With --truth PHANTOM (or "paper") it prints the
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
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return usagef("pet reconstruct needs -o PREFIX")
			}
			if iterations < 1 {
				return usagef("--iterations must be at least 1")
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
			var ph *jpet.Phantom
			if truth != "" {
				name := truth
				if truth == "paper" {
					name = ""
				}
				p, err := readPhantom(name)
				if err != nil {
					return err
				}
				ph = &p
			}
			events, err := readEvents(args[0])
			if err != nil {
				return err
			}
			events, rejected := s.Screen(events, margin)
			var bar *progress
			opt.Progress = func(done int) { bar.Update(int64(done)) }
			r, err := jpet.NewReconstructor(s, events, opt)
			if err != nil {
				return usageError{err}
			}
			start := time.Now()
			for it := 1; it <= iterations; it++ {
				t := time.Now()
				bar = newCountProgress(stderr, int64(len(events)), fmt.Sprintf("iteration %d: events", it), quiet)
				r.Iterate()
				bar.Done()
				line := fmt.Sprintf("iteration %d: %.3f s", it, time.Since(t).Seconds())
				if ph != nil {
					q := jpet.Compare(s, ph, r.Image())
					line += fmt.Sprintf(", NRMSE %.4f, ellipse means %.3f (true %v)", q.NRMSE, q.Mean, q.True)
				}
				fmt.Fprintln(stderr, line)
				if every > 0 && (it%every == 0 || it == iterations) {
					if err := writePNG(fmt.Sprintf("%s_%02d.png", out, it), r.Image(), s); err != nil {
						return err
					}
				}
			}
			if err := writeNRRDFile(out+".nrrd", r.Image(), s); err != nil {
				return err
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

func writePNG(name string, img []float64, s jpet.Scanner) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := output.WriteImagePNG(f, img, s.NZ, s.NY, 4); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", filepath.Base(name), err)
	}
	return f.Close()
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
		RunE: func(*cobra.Command, []string) error {
			if events < 1 {
				return usagef("--events must be positive")
			}
			s := jpet.PaperScanner().WithDefaults()
			// About 80 % of the emissions are detected with angles in (-pi/4, pi/4).
			sim, err := jpet.Simulate(s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: events * 5 / 4, Seed: 1})
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

// readEvents reads events in the format the extension names: .txt, .parquet
// or the authors' binary format.
func readEvents(name string) ([]jpet.Event, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".parquet":
		return output.ReadEventsParquet(name)
	case ".txt":
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return jpet.ReadEventsText(f, name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return jpet.ReadEvents(f, name)
}

func writeEventsParquet(name string, events []jpet.Event) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := output.WriteEventsParquet(f, events); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
