package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/online"
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
	serve    string
	speed    float64
	repeat   int
	walk     string
	quiet    bool
}

func newSimulatePixelCmd(stderr io.Writer) *cobra.Command {
	o := simulatePixelOptions{dataset: "gamma", hits: 1000000, seed: 1, rate: 2.5, speed: 1}
	var names []string
	for _, d := range pixelsim.Datasets {
		names = append(names, fmt.Sprintf("  %-8s %s", d.Name, d.Paper))
	}
	cmd := &cobra.Command{
		Use:   "pixel -o FILE | --serve tcp://HOST:PORT",
		Short: "Simulate Timepix3 hits mimicking the paper's datasets",
		Long: `Simulate a seeded, reproducible Timepix3 hit stream. The output format
follows the extension: .tpx3 (chip 0 raw), .t3pa or .csv.

With --serve, play a live readout instead: listen on HOST:PORT and send
a client the bytes that -o run.tpx3 would write, each chunk when its
hits come due, so that --rate is also the rate served (--speed 2 serves
twice as fast, --speed 0 as fast as the client reads). One client at a
time; the run pauses while none is connected, and a client that goes
away loses the chunk being sent. It stops after --hits hits or when
interrupted. Port 0 takes a free port; the address is printed.

Every hit is time-stamped late by the time walk a/(ToT-b)+c ns (ToT in
25 ns ticks) of --timewalk A,B,C, 400,-4,0 by default, or not at all
with --timewalk none (see hitflow timewalk fit).

Datasets (the paper's mean and std of the cluster size):
` + strings.Join(names, "\n"),
		Example: `  hitflow simulate pixel --dataset gamma --hits 4000000 --seed 1 -o gamma.tpx3
  hitflow simulate pixel --dataset pb90 --rate 40 --disorder 100us -o pb90.t3pa
  hitflow simulate pixel --serve tcp://127.0.0.1:8451 --rate 40 --hits 400000000
  hitflow simulate pixel --timewalk 1500,-2.5,0 -o walk.tpx3`,
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
	f.StringVar(&o.serve, "serve", "", "serve the .tpx3 stream live at tcp://HOST:PORT instead")
	f.Float64Var(&o.speed, "speed", o.speed, "with --serve: times real time (0: as fast as the client reads)")
	f.IntVar(&o.repeat, "repeat", 1, "with --serve: serve the run this many times, each later than the last (simulated and encoded in memory first, each copy the first's bytes with their times advanced: a long run faster than the simulation)")
	f.StringVar(&o.walk, "timewalk", "400,-4,0", "time walk a,b,c of a/(ToT-b)+c ns, or none")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

// parseWalk reads --timewalk A,B,C or none.
func parseWalk(s string) (*pixelsim.Walk, error) {
	if strings.EqualFold(s, "none") {
		return &pixelsim.Walk{}, nil
	}
	var w pixelsim.Walk
	f := strings.Split(s, ",")
	if len(f) != 3 {
		return nil, usagef("--timewalk %q: want A,B,C (a/(ToT-b)+c ns) or none", s)
	}
	for i, dst := range []*float64{&w.A, &w.B, &w.C} {
		v, err := strconv.ParseFloat(strings.TrimSpace(f[i]), 64)
		if err != nil {
			return nil, usagef("--timewalk %q: %q is not a number", s, f[i])
		}
		*dst = v
	}
	return &w, nil
}

func runSimulatePixel(ctx context.Context, o simulatePixelOptions, stderr io.Writer) error {
	switch {
	case o.out == "" && o.serve == "":
		return usagef("simulate pixel needs -o FILE or --serve tcp://HOST:PORT")
	case o.out != "" && o.serve != "":
		return usagef("simulate pixel writes -o FILE or serves --serve ADDRESS, not both")
	case !(o.speed >= 0) || math.IsInf(o.speed, 0):
		return usagef("--speed %v: must be 0 or a positive factor", o.speed)
	case o.repeat < 1:
		return usagef("--repeat %d: must be at least 1", o.repeat)
	case o.repeat > 1 && o.serve == "":
		return usagef("--repeat is for --serve")
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
	walk, err := parseWalk(o.walk)
	if err != nil {
		return err
	}
	opt := pixelsim.Options{Dataset: d, Hits: o.hits, Seed: o.seed, RateMHz: o.rate, Disorder: o.disorder, Walk: walk}
	if err := pixelsim.Validate(opt); err != nil {
		return usageError{err}
	}
	if o.serve != "" {
		return serveSimulation(ctx, o, opt, stderr)
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

// serveSimulation plays the simulated run as a live readout at o.serve.
func serveSimulation(ctx context.Context, o simulatePixelOptions, opt pixelsim.Options, stderr io.Writer) error {
	addr, ok := strings.CutPrefix(o.serve, "tcp://")
	if !ok {
		return usagef("--serve %s: want tcp://HOST:PORT", o.serve)
	}
	if err := prepare(ctx, nil); err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("--serve: %w", err)
	}
	fmt.Fprintf(stderr, "serving %d %s hits (seed %d, %.3g Mhit/s, speed %v, %s) on tcp://%s\n", o.hits, opt.Dataset.Name, o.seed, o.rate, o.speed, plural(o.repeat, "time"), l.Addr())
	start := time.Now()
	st, err := online.Serve(ctx, l, opt, online.ServeOptions{Speed: o.speed, Repeat: o.repeat})
	line := fmt.Sprintf("served %d hits (%s) in %.3f s to %s", st.Hits, online.Bytes(st.Bytes), time.Since(start).Seconds(), plural(st.Connections, "client"))
	if st.LostHits > 0 {
		line += fmt.Sprintf(", %d hits lost with clients that went away", st.LostHits)
	}
	if st.Late > time.Millisecond {
		line += fmt.Sprintf(", up to %v behind the pace", st.Late.Round(time.Millisecond))
	}
	fmt.Fprintln(stderr, line)
	if ctx.Err() != nil {
		return stopped(ctx, "")
	}
	return err
}
