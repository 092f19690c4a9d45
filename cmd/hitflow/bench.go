package main

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/internal/bench"
	"github.com/hitflow/hitflow/online"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelcl"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Reproduce the papers' benchmarks",
	}
	cmd.AddCommand(newBenchClueCmd(stdout), newBenchPetCmd(stdout), newBenchPixelCmd(stdout, stderr), newBenchLiveCmd(stdout))
	return cmd
}

type benchClueOptions struct {
	steps, repeat, events int
	device                string
}

func newBenchClueCmd(stdout io.Writer) *cobra.Command {
	o := benchClueOptions{steps: 10, repeat: 5}
	cmd := &cobra.Command{
		Use:   "clue",
		Short: "The CLUE paper's Table 1: 100 layers of 1,000 to 10,000 points",
		Long: `Time CLUE on the synthetic calorimeter of the paper (100 layers, 1,000 to
10,000 points per layer in steps, bin 5 cm, dc 3, deltac = deltao 5,
rhoc 8), on one worker and on all cores, and with --device on an OpenCL
device too, with the time of each step (on a device, the kernels' time,
the transfers apart). Each point is the median of the repetitions, after
a warm-up run that sizes the reused buffers. Prints a Markdown table.`,
		Example: "  hitflow bench clue\n  hitflow bench clue --steps 3 --repeat 3\n  hitflow bench clue --device opencl\n  hitflow bench clue --device opencl --events 100 --steps 10",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchClue(cmd.Context(), o, stdout)
		},
	}
	cmd.Flags().IntVar(&o.steps, "steps", o.steps, "number of sizes (1,000 points per layer more each)")
	cmd.Flags().IntVar(&o.repeat, "repeat", o.repeat, "repetitions per point (median)")
	cmd.Flags().IntVar(&o.events, "events", 0, "instead: this many events of the calorimeter (1,000 x --steps points a layer each) clustered in one run, in events/s")
	deviceFlag(cmd.Flags(), &o.device)
	return cmd
}

func runBenchClue(ctx context.Context, o benchClueOptions, stdout io.Writer) error {
	if o.steps < 1 || o.steps > 10 || o.repeat < 1 {
		return usagef("--steps must be 1..10 and --repeat positive")
	}
	if err := checkDevice(o.device); err != nil {
		return err
	}
	if err := prepare(ctx, nil); err != nil {
		return err
	}
	if o.events < 0 {
		return usagef("--events must not be negative")
	}
	run := func(dev *opencl.Context) error {
		if o.events > 0 {
			return bench.CLUEEvents(ctx, o.events, 1000*o.steps, o.repeat, dev, stdout)
		}
		return bench.CLUE(ctx, o.steps, o.repeat, dev, stdout)
	}
	if o.device == "cpu" {
		return run(nil)
	}
	dev, err := openDevice(o.device)
	if err != nil {
		return err
	}
	return errors.Join(run(dev), dev.Close())
}

type benchPetOptions struct {
	events, iterations int
	cache              int64
	device             string
}

func newBenchPetCmd(stdout io.Writer) *cobra.Command {
	o := benchPetOptions{events: 1000000, iterations: 5}
	cmd := &cobra.Command{
		Use:   "pet",
		Short: "Time MLEM iterations on the paper's set-up",
		Long: `Simulate events of the paper's phantom with the paper's set-up (R = 0.125 m,
L = 0.3 m, 4 mm pixels, sigma_z 10 mm, sigma_dl 40 mm) and time, for each
kernel on 1 worker and on all cores, the first MLEM iteration (which
computes every kernel value, and keeps as many as --kernel-cache allows)
and the next --iterations (which read the kept values; the median is
shown). Prints a Markdown table.`,
		Example: "  hitflow bench pet\n  hitflow bench pet --events 10000000 --iterations 1\n  hitflow bench pet --kernel-cache 0",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchPet(cmd.Context(), o, stdout)
		},
	}
	cmd.Flags().IntVar(&o.events, "events", o.events, "number of detected events")
	cmd.Flags().IntVar(&o.iterations, "iterations", o.iterations, "iterations timed after the first")
	cacheFlag(cmd.Flags(), &o.cache)
	deviceFlag(cmd.Flags(), &o.device)
	return cmd
}

func runBenchPet(ctx context.Context, o benchPetOptions, stdout io.Writer) error {
	if o.events < 1 {
		return usagef("--events must be positive")
	}
	if o.iterations < 1 {
		return usagef("--iterations must be positive")
	}
	if err := checkDevice(o.device); err != nil {
		return err
	}
	if err := prepare(ctx, nil); err != nil {
		return err
	}
	if o.device == "cpu" {
		return bench.PET(ctx, o.events, o.iterations, o.cache, nil, stdout)
	}
	dev, err := openDevice(o.device)
	if err != nil {
		return err
	}
	return errors.Join(bench.PET(ctx, o.events, o.iterations, o.cache, dev, stdout), dev.Close())
}

type pixelBenchOptions struct {
	datasets, modes, plot, file string
	hits, repeat, runs, e2eHits int
	rate                        float64
	input                       inputFlags // how --file is read
	device                      string
}

func newBenchPixelCmd(stdout, stderr io.Writer) *cobra.Command {
	var names []string
	for _, d := range pixelsim.Datasets {
		names = append(names, d.Name)
	}
	o := pixelBenchOptions{datasets: strings.Join(names, ","), modes: "sequential,lanes,chunked",
		hits: 4000000, repeat: 25, runs: 5, rate: 10, e2eHits: 20000000, input: defaultInput}
	cmd := &cobra.Command{
		Use:   "pixel",
		Short: "The clustering benchmark of Čelko et al. on the simulated datasets",
		Long: `Follow the paper's method: the hits of a dataset are loaded into memory,
then the clock runs while the set is repeated --repeat times with a ToA
offset and clustered (local definition, dt 200 ns); --runs runs, median
reported. Every mode runs on 1 .. GOMAXPROCS workers (sequential on one),
with the parallel efficiency (rate / (workers x rate on one worker)).
Then the end-to-end rate: a file on local disk (--file, read as cluster
reads it: --format, --layout and --sensor apply; or one simulated gamma
and pion45 .tpx3 run in the temporary directory) decoded, sorted,
clustered and written as Parquet and as Arrow IPC, in every mode and
auto, with how busy the cores were and the most memory its runs took;
before each run the previous output is removed and the disks synced, so
that no run pays for the write-back of the one before. With --device,
chunked also runs with its chunk step on that OpenCL device, in both
tables: clustering only twice, the closed clusters summed on the device
and on the host; end to end as the device does by default. Prints Markdown tables; --plot draws Mhit/s against workers.`,
		Example: `  hitflow bench pixel --plot scaling.png
  hitflow bench pixel --datasets gamma,pion45 --hits 1000000 --repeat 5 --runs 3
  hitflow bench pixel --device opencl --datasets gamma,pion45`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchPixel(cmd.Context(), o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.datasets, "datasets", o.datasets, "comma-separated datasets")
	f.StringVar(&o.modes, "modes", o.modes, "comma-separated modes")
	f.IntVar(&o.hits, "hits", o.hits, "hits per dataset in memory")
	f.IntVar(&o.repeat, "repeat", o.repeat, "repetitions of the set per run")
	f.IntVar(&o.runs, "runs", o.runs, "runs per measurement (median)")
	f.Float64Var(&o.rate, "rate", o.rate, "simulated hit rate in Mhit/s")
	f.StringVar(&o.plot, "plot", "", "also draw Mhit/s against workers (.png or .svg)")
	f.StringVar(&o.file, "file", "", "hit file for the end-to-end rate (default: simulate gamma and pion45 .tpx3 runs)")
	f.IntVar(&o.e2eHits, "e2e-hits", o.e2eHits, "hits of the simulated end-to-end file (0: skip)")
	o.input.add(f)
	deviceFlag(f, &o.device)
	return cmd
}

func runBenchPixel(ctx context.Context, o pixelBenchOptions, stdout, stderr io.Writer) error {
	switch {
	case o.hits < 1:
		return usagef("--hits %d: must be positive", o.hits)
	case o.repeat < 1:
		return usagef("--repeat %d: must be positive", o.repeat)
	case o.runs < 1:
		return usagef("--runs %d: must be positive", o.runs)
	case !(o.rate > 0):
		return usagef("--rate %v: must be positive", o.rate)
	case o.e2eHits < 0:
		return usagef("--e2e-hits %d: must be positive, or 0 for no simulated end-to-end run", o.e2eHits)
	}
	if err := checkDevice(o.device); err != nil {
		return err
	}
	var datasets []pixelsim.Dataset
	for _, name := range strings.Split(o.datasets, ",") {
		d, err := pixelsim.DatasetByName(strings.TrimSpace(name))
		if err != nil {
			return usageError{err}
		}
		if !slices.ContainsFunc(datasets, func(e pixelsim.Dataset) bool { return e.Name == d.Name }) {
			datasets = append(datasets, d)
		}
	}
	var modes []pixel.Mode
	for _, name := range strings.Split(o.modes, ",") {
		m, err := pixel.ParseMode(strings.TrimSpace(name))
		if err != nil || m == pixel.Auto {
			return usagef("--modes: %q is not sequential, lanes or chunked", name)
		}
		if !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	// What can be checked before the long clustering runs is.
	if _, err := plotFormat(o.plot); err != nil {
		return err
	}
	err := prepare(ctx, positional(o.file), role("--plot", o.plot))
	if err != nil {
		return err
	}
	b := bench.Pixel{Datasets: datasets, Modes: modes, Hits: o.hits, Repeat: o.repeat, Runs: o.runs, Rate: o.rate,
		Plot: o.plot, E2EHits: o.e2eHits}
	if o.file != "" {
		if b.File, b.Reader, b.Cluster, err = benchFile(o); err != nil {
			return err
		}
	}
	if o.device == "cpu" {
		return bench.RunPixel(ctx, b, stdout, stderr)
	}
	lab, closeDevice, err := openOn(o.device, pixelcl.New)
	if err != nil {
		return err
	}
	b.Labeler, b.Device = lab, lab.Where()
	return errors.Join(bench.RunPixel(ctx, b, stdout, stderr), closeDevice())
}

// benchFile returns --file with how cluster reads it, having read its
// first batch, so that a file that cannot be read fails before the
// clustering runs, not after them.
func benchFile(o pixelBenchOptions) (string, tpx3.Options, pixel.Config, error) {
	cfg := pixel.DefaultConfig()
	opt, width, height, err := o.input.options()
	if err != nil {
		return "", opt, cfg, err
	}
	f, err := os.Open(o.file)
	if err != nil {
		return "", opt, cfg, err
	}
	defer f.Close()
	r, err := tpx3.NewReader(f, o.file, opt)
	if err == nil {
		if err = r.Read(&pixel.Hits{}); err == io.EOF {
			err = nil
		}
	}
	cfg.Width, cfg.Height = width, height
	return o.file, opt, cfg, err
}

type benchLiveOptions struct {
	datasets    []string
	rates       []float64
	seconds     float64
	maxHits     int
	out, buffer string
	spool       string
}

func newBenchLiveCmd(stdout io.Writer) *cobra.Command {
	o := benchLiveOptions{datasets: []string{"gamma", "pion45"}, rates: []float64{10, 40, 80, 0}, seconds: 10,
		maxHits: 100_000_000, buffer: "1GiB"}
	cmd := &cobra.Command{
		Use:   "live",
		Short: "Cluster a simulated readout live over loopback TCP",
		Long: `Serve simulated runs over loopback TCP at each rate (as hitflow simulate
pixel --serve does, simulated in memory first so that the simulation does
not set the pace; rate 0 serves as fast as the client reads, the
sustained maximum) and cluster them live into --out (by default Arrow
IPC, formatted and thrown away: a disk's bandwidth is not hitflow's), as
hitflow cluster tcp://... does. For each: the rate clustered, how far the server fell
behind its pace, hits lost (served but not clustered: always 0 unless
something is wrong), what the buffer did (spooled to --spool, or the
source waited), the latency of the clusters and how busy the cores were.
The server runs in the same process, on the same cores. Prints a
Markdown table.`,
		Example: "  hitflow bench live\n  hitflow bench live --datasets gamma --rates 80 --seconds 60 --spool /data/spool",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchLive(cmd.Context(), o, stdout)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.datasets, "datasets", o.datasets, "datasets served")
	f.Float64SliceVar(&o.rates, "rates", o.rates, "served rates in Mhit/s; 0: as fast as the client reads")
	f.Float64Var(&o.seconds, "seconds", o.seconds, "run time of each measurement at a served rate")
	f.IntVar(&o.maxHits, "max-hits", o.maxHits, "hits of a measurement served as fast as read")
	f.StringVar(&o.out, "out", o.out, "clusters file written (and replaced) by each measurement; default: Arrow IPC formatted and discarded")
	f.StringVar(&o.buffer, "buffer", o.buffer, "memory of the stream's buffer")
	f.StringVar(&o.spool, "spool", "", "directory for the stream's spool (without it, the source waits)")
	return cmd
}

func runBenchLive(ctx context.Context, o benchLiveOptions, stdout io.Writer) error {
	b := bench.Live{Rates: o.rates, Seconds: o.seconds, MaxHits: o.maxHits, Out: o.out, Spool: o.spool}
	var err error
	if b.Memory, err = online.ParseSize(o.buffer); err != nil || b.Memory <= 0 {
		return usagef("--buffer %q: want a size such as 1GiB", o.buffer)
	}
	for _, name := range o.datasets {
		d, err := pixelsim.DatasetByName(name)
		if err != nil {
			return usageError{err}
		}
		b.Datasets = append(b.Datasets, d)
	}
	for _, r := range o.rates {
		if !(r >= 0) || math.IsInf(r, 0) {
			return usagef("--rates: %v is not a rate", r)
		}
	}
	if o.seconds <= 0 || o.maxHits < 1 {
		return usagef("--seconds and --max-hits must be positive")
	}
	if err := prepare(ctx, nil, role("--out", o.out)); err != nil {
		return err
	}
	return bench.RunLive(ctx, b, stdout)
}
