package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/format/nrrd"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/jpet/jpetcl"
	"github.com/hitflow/hitflow/plot"
)

func newPetCmd(stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pet",
		Short: "Two-strip J-PET: simulation and list-mode MLEM reconstruction",
	}
	cmd.AddCommand(newPetSimulateCmd(stderr), newPetReconstructCmd(stderr))
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
		return nrrd.WriteImage(w, jpet.Image{Values: img, NZ: s.NZ, NY: s.NY, Pixel: s.Pixel})
	})
}

type petSimulateOptions struct {
	scanner              jpet.Scanner
	phantom, out         string
	emissions            int
	seed                 uint64
	angle                float64 // degrees
	text, parquet, quiet bool
}

func newPetSimulateCmd(stderr io.Writer) *cobra.Command {
	o := petSimulateOptions{emissions: 1000000, seed: 1, angle: 45}
	cmd := &cobra.Command{
		Use:   "simulate -o PREFIX",
		Short: "Simulate list-mode events from a phantom",
		Long: `Simulate emissions from a phantom (the paper's six ellipses by default, or
a file of "ellipse z y a b angle_deg activity" and "point z y activity"
lines, in metres), angles uniform in (-angle, angle), Gaussian resolution,
acceptance on the strips. Writes PREFIX.bin (float32 z_u z_d dl, the
authors' format), PREFIX.txt with --text, PREFIX.parquet with --parquet
(columns z_u, z_d, dl, float32 as in the binary format), and the images
PREFIX_emitted.nrrd, PREFIX_detected.nrrd and PREFIX_naive.nrrd. A
PREFIX ending in .bin is the prefix before it.`,
		Example: `  hitflow pet simulate --emissions 1000000 --seed 1 -o phantom
  hitflow pet simulate --angle 90 --emissions 200000 -o A   # the authors' A.bin set-up`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPetSimulate(cmd.Context(), o, stderr)
		},
	}
	f := cmd.Flags()
	scannerFlags(f, &o.scanner)
	f.StringVar(&o.phantom, "phantom", "", "phantom file (default: the paper's phantom)")
	f.IntVar(&o.emissions, "emissions", o.emissions, "number of emitted pairs")
	f.Uint64Var(&o.seed, "seed", o.seed, "random seed")
	f.Float64Var(&o.angle, "angle", o.angle, "emission angles uniform in (-angle, angle) degrees")
	f.BoolVar(&o.text, "text", false, "also write the events as text")
	f.BoolVar(&o.parquet, "parquet", false, "also write the events as Parquet")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	f.StringVarP(&o.out, "output", "o", "", "output prefix")
	return cmd
}

func runPetSimulate(ctx context.Context, o petSimulateOptions, stderr io.Writer) error {
	if o.out == "" {
		return usagef("pet simulate needs -o PREFIX")
	}
	o.out, _ = prefixOf(o.out, ".bin")
	if !(o.angle > 0 && o.angle <= 90) {
		return usagef("--angle %v: want degrees in (0, 90]", o.angle)
	}
	if o.emissions < 0 {
		return usagef("--emissions %d: must not be negative", o.emissions)
	}
	s := o.scanner.WithDefaults()
	if err := s.Validate(); err != nil {
		return usageError{err}
	}
	events := []outfile.Role{role("-o", o.out+".bin")}
	if o.text {
		events = append(events, role("--text", o.out+".txt"))
	}
	if o.parquet {
		events = append(events, role("--parquet", o.out+".parquet"))
	}
	images := []string{"emitted", "detected", "naive"}
	outs := slices.Clone(events)
	for _, name := range images {
		outs = append(outs, role("-o", o.out+"_"+name+".nrrd"))
	}
	if err := prepare(ctx, []outfile.Role{role("--phantom", o.phantom)}, outs...); err != nil {
		return err
	}
	ph, err := readPhantom(o.phantom)
	if err != nil {
		return err
	}
	start := time.Now()
	bar := newCountProgress(stderr, int64(o.emissions), "emissions", o.quiet)
	sim, err := jpet.Simulate(ctx, s, ph, jpet.SimOptions{Emissions: o.emissions, Seed: o.seed, MaxAngle: o.angle * math.Pi / 180,
		Progress: func(done int) { bar.Update(int64(done)) }})
	bar.Done()
	if errors.Is(err, context.Canceled) {
		return stopped(ctx, "nothing written")
	}
	if err != nil {
		return usageError{err}
	}
	for _, r := range events {
		if err := format.WriteEvents(r.Name, sim.Events); err != nil {
			return err
		}
	}
	for i, img := range [][]float64{sim.Emitted, sim.Detected, sim.Naive} {
		if err := writeNRRDFile(o.out+"_"+images[i]+".nrrd", img, s); err != nil {
			return err
		}
	}
	names := make([]string, len(events))
	for i, r := range events {
		names[i] = r.Name
	}
	// A phantom in millimetres, read as metres, emits nearly all beyond
	// the image and the strips: the count says why so few were detected.
	outside := ""
	if sim.Outside > 0 {
		outside = fmt.Sprintf(" (%d outside the image's %.3g x %.3g m; the phantom is in metres)",
			sim.Outside, float64(s.NZ)*s.Pixel, float64(s.NY)*s.Pixel)
	}
	fmt.Fprintf(stderr, "emissions %d%s, detected %d, %.1f s; wrote %s and images %dx%d\n",
		o.emissions, outside, len(sim.Events), time.Since(start).Seconds(), strings.Join(names, ", "), s.NZ, s.NY)
	return nil
}

type petReconstructOptions struct {
	scanner                        jpet.Scanner
	out, kernel, truth             string
	iterations, workers, every     int
	sensitivity, authorsBox, quiet bool
	margin                         float64 // sigma_z
	cache                          int64
	device, precision              string
}

func newPetReconstructCmd(stderr io.Writer) *cobra.Command {
	o := petReconstructOptions{iterations: 10, kernel: "analytic", every: 1, margin: 5, precision: "double"}
	cmd := &cobra.Command{
		Use:   "reconstruct EVENTS.bin|EVENTS.txt|EVENTS.parquet -o PREFIX",
		Short: "List-mode MLEM reconstruction",
		Long: `Reconstruct an image from list-mode events (the authors' float32 format)
with MLEM and the analytic kernel (or the Gaussian one), starting from 1
everywhere. Writes PREFIX.nrrd (float32) at the end and PREFIX_NN.png (the image with
axes in metres and a colour bar; NN with as many digits as the last
iteration) every --png-every iterations and after the last. Interrupted
(Ctrl-C, SIGTERM), it stops after the iteration under way and writes
PREFIX.nrrd of the last whole iteration (a PREFIX ending in .nrrd is the
prefix before it). With --truth PHANTOM (or "paper") it prints the
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
			return runPetReconstruct(cmd.Context(), o, args[0], stderr)
		},
	}
	f := cmd.Flags()
	scannerFlags(f, &o.scanner)
	f.IntVar(&o.iterations, "iterations", o.iterations, "MLEM iterations")
	f.StringVar(&o.kernel, "kernel", o.kernel, "kernel: analytic or gaussian")
	f.BoolVar(&o.sensitivity, "sensitivity", false, "weigh by the pixel sensitivity")
	f.BoolVar(&o.authorsBox, "authors-box", false, "reproduce the authors' event box (last row and column left out)")
	f.IntVar(&o.workers, "workers", 0, "workers (0: all cores)")
	f.IntVar(&o.every, "png-every", o.every, "write a PNG every k iterations (0: none)")
	f.StringVar(&o.truth, "truth", "", `phantom file, or "paper", to measure the image against`)
	cacheFlag(f, &o.cache)
	deviceFlag(f, &o.device)
	f.StringVar(&o.precision, "precision", o.precision, "with --device opencl: double, or single for the kernel values' square roots and exponentials (faster on a GPU; the image within a few 1e-6 of double's)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	f.Float64Var(&o.margin, "off-strip", o.margin, "drop events with a hit beyond a strip end by more than this many sigma_z (negative: keep all)")
	f.StringVarP(&o.out, "output", "o", "", "output prefix")
	return cmd
}

func runPetReconstruct(ctx context.Context, o petReconstructOptions, in string, stderr io.Writer) error {
	if o.out == "" {
		return usagef("pet reconstruct needs -o PREFIX")
	}
	o.out, _ = prefixOf(o.out, ".nrrd")
	if o.iterations < 1 {
		return usagef("--iterations must be at least 1")
	}
	if o.every < 0 {
		return usagef("--png-every must not be negative")
	}
	if o.workers < 0 {
		return usagef("--workers must not be negative")
	}
	if err := checkDevice(o.device); err != nil {
		return err
	}
	precision, err := jpetcl.ParsePrecision(o.precision)
	if err != nil {
		return usagef("--precision: %v", err)
	}
	if precision != jpetcl.Double && o.device == "cpu" {
		return usagef("--precision %s needs --device opencl: the CPU computes in double", precision)
	}
	if _, err := format.EventFormat(in); err != nil {
		return usageError{err}
	}
	opt := jpet.Options{Sensitivity: o.sensitivity, AuthorsBox: o.authorsBox, Workers: o.workers, KernelCache: o.cache}
	switch o.kernel {
	case "analytic":
	case "gaussian":
		opt.Kernel = jpet.Gaussian
	default:
		return usagef("unknown kernel %q (want analytic or gaussian)", o.kernel)
	}
	s := o.scanner.WithDefaults()
	if err := s.Validate(); err != nil {
		return usageError{err}
	}
	outs := []outfile.Role{role("-o", o.out+".nrrd")}
	for it := 1; it <= o.iterations; it++ {
		if o.every > 0 && (it%o.every == 0 || it == o.iterations) {
			outs = append(outs, role("-o", pngName(o.out, it, o.iterations)))
		}
	}
	phantomFile := o.truth
	if o.truth == "paper" {
		phantomFile = ""
	}
	if err := prepare(ctx, append(positional(in), role("--truth", phantomFile)), outs...); err != nil {
		return err
	}
	// The device is opened before the events are read: a machine without
	// it fails at once.
	var dev *opencl.Context
	if o.device != "cpu" {
		var err error
		if dev, err = openDevice(o.device); err != nil {
			return err
		}
		defer dev.Close()
	}
	var ph *jpet.Phantom
	if o.truth != "" {
		p, err := readPhantom(phantomFile)
		if err != nil {
			return err
		}
		ph = &p
	}
	events, err := format.ReadEvents(ctx, in)
	if errors.Is(err, context.Canceled) {
		return stopped(ctx, "nothing written")
	}
	if err != nil {
		return err
	}
	events, rejected := s.Screen(events, o.margin)
	if len(events) == 0 {
		return fmt.Errorf("%s: no events to reconstruct (%d rejected as beyond the strips)", in, rejected)
	}
	var bar *progress
	opt.Progress = func(done int) { bar.Update(int64(done)) }
	r, err := jpetcl.New(dev, s, events, opt, precision)
	if err != nil && dev == nil {
		return usageError{err} // the CPU refuses only options
	}
	if err != nil {
		return err
	}
	defer r.Close()
	start := time.Now()
	done := 0
	var failed error
	for it := 1; it <= o.iterations && ctx.Err() == nil; it++ {
		t := time.Now()
		bar = newCountProgress(stderr, int64(len(events)), fmt.Sprintf("iteration %d: events", it), o.quiet)
		failed = r.Iterate()
		bar.Done()
		if failed != nil {
			break
		}
		done = it
		line := fmt.Sprintf("iteration %d: %.3f s", it, time.Since(t).Seconds())
		img, err := r.Image()
		if err != nil {
			failed = err
			break
		}
		if ph != nil {
			q := jpet.Compare(s, ph, img)
			line += fmt.Sprintf(", NRMSE %.4f, ellipse means %.3f (true %v)", q.NRMSE, q.Mean, q.True)
		}
		fmt.Fprintln(stderr, line)
		if o.every > 0 && (it%o.every == 0 || it == o.iterations) {
			title := fmt.Sprintf("%s: MLEM iteration %d of %d", filepath.Base(in), it, o.iterations)
			if err := writePNG(pngName(o.out, it, o.iterations), img, s, title); err != nil {
				return err
			}
		}
	}
	// An interrupted or failed run keeps the image of the last whole
	// iteration: a valid MLEM estimate, named as such.
	if done == 0 {
		if failed != nil {
			return fmt.Errorf("%w; nothing written", failed)
		}
		return stopped(ctx, "nothing written")
	}
	var img []float64
	if failed == nil {
		img, failed = r.Image()
	}
	if img == nil { // read again: a failed iteration left the last whole one
		img, err = r.Image()
		if err != nil {
			return fmt.Errorf("%w; the image could not be read back: nothing written", errors.Join(failed, err))
		}
	}
	if err := writeNRRDFile(o.out+".nrrd", img, s); err != nil {
		return err
	}
	kept := fmt.Sprintf("%s.nrrd holds the image after iteration %d of %d", o.out, done, o.iterations)
	if failed != nil {
		return fmt.Errorf("%w; %s", failed, kept)
	}
	if done < o.iterations {
		return stopped(ctx, kept)
	}
	fmt.Fprintf(stderr, "events %d (rejected %d), %d iterations on %s, %.2f s; wrote %s.nrrd (%dx%d)\n",
		len(events), rejected, o.iterations, r.Where(), time.Since(start).Seconds(), o.out, s.NZ, s.NY)
	return nil
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

// cacheFlag registers --kernel-cache.
func cacheFlag(f *pflag.FlagSet, cache *int64) {
	*cache = availableMemory() / 2
	f.Var(memoryFlag{cache}, "kernel-cache", "MiB to keep kernel values in between iterations (about 4.3 bytes a pixel of an event; 0: none), or auto: half the available memory")
	f.Lookup("kernel-cache").DefValue = "auto"
}
