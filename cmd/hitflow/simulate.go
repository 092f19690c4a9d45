package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

func newSimulateCmd(stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Write synthetic data for tests, demos and benchmarks",
	}
	cmd.AddCommand(newSimulatePixelCmd(stderr), newSimulateClueCmd(stderr))
	return cmd
}

type simulatePixelOptions struct {
	dataset  string
	hits     int
	seed     uint64
	rate     float64
	disorder pixel.Time
	out      string
	quiet    bool
}

func newSimulatePixelCmd(stderr io.Writer) *cobra.Command {
	o := simulatePixelOptions{dataset: "gamma", hits: 1000000, seed: 1, rate: 2.5}
	var names []string
	for _, d := range pixelsim.Datasets {
		names = append(names, fmt.Sprintf("  %-8s %s", d.Name, d.Paper))
	}
	cmd := &cobra.Command{
		Use:   "pixel -o FILE",
		Short: "Simulate Timepix3 hits mimicking the paper's datasets",
		Long: `Simulate a seeded, reproducible Timepix3 hit stream. The output format
follows the extension: .tpx3 (chip 0 raw), .t3pa or .csv.

Datasets (the paper's mean and std of the cluster size):
` + strings.Join(names, "\n"),
		Example: `  hitflow simulate pixel --dataset gamma --hits 4000000 --seed 1 -o gamma.tpx3
  hitflow simulate pixel --dataset pb90 --rate 40 --disorder 100us -o pb90.t3pa`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSimulatePixel(cmd.Context(), o, stderr) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dataset, "dataset", o.dataset, "dataset name")
	f.IntVar(&o.hits, "hits", o.hits, "number of hits")
	f.Uint64Var(&o.seed, "seed", o.seed, "random seed")
	f.Float64Var(&o.rate, "rate", o.rate, "mean hit rate in Mhit/s")
	f.Var(timeFlag{&o.disorder}, "disorder", "readout disorder: hits delayed by up to this (0: sorted)")
	f.StringVarP(&o.out, "output", "o", "", "output file (.tpx3, .t3pa or .csv)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

func runSimulatePixel(ctx context.Context, o simulatePixelOptions, stderr io.Writer) error {
	if o.out == "" {
		return usagef("simulate pixel needs -o FILE")
	}
	switch {
	case o.hits < 0:
		return usagef("--hits %d: must not be negative", o.hits)
	case !(o.rate > 0) || math.IsInf(o.rate, 0): // 0 would be the library's default, 2.5
		return usagef("--rate %v: must be a positive number of Mhit/s", o.rate)
	}
	d, err := pixelsim.DatasetByName(o.dataset)
	if err != nil {
		return usageError{err}
	}
	format, err := tpx3.ParseFormat(strings.TrimPrefix(filepath.Ext(o.out), "."))
	if err != nil || format == tpx3.Auto || format == tpx3.Katherine {
		return usagef("%s: output extension must be .tpx3, .t3pa or .csv", o.out)
	}
	if err := prepare(ctx, nil, role("-o", o.out)); err != nil {
		return err
	}
	f, err := outfile.CreateWriter(o.out, nil)
	if err != nil {
		return err
	}
	defer f.Abort() // a simulation cut short is not the one asked for
	w, err := tpx3.NewHitWriter(f, format)
	if err != nil {
		return err
	}
	opt := pixelsim.Options{Dataset: d, Hits: o.hits, Seed: o.seed, RateMHz: o.rate, Disorder: o.disorder}
	bar := newCountProgress(stderr, int64(o.hits), "hits", o.quiet)
	var done int64
	err = pixelsim.Generate(opt, func(h *pixel.Hits) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		done += int64(h.Len())
		bar.Update(done)
		return w.Write(h)
	})
	bar.Done()
	if errors.Is(err, context.Canceled) {
		return stopped(ctx, "nothing written")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.out, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", o.out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d %s hits (seed %d, %.3g Mhit/s, disorder %v ns) to %s\n", o.hits, d.Name, o.seed, o.rate, o.disorder.Ns(), o.out)
	return nil
}
