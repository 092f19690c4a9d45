package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// clusterOptions are the flags of "hitflow cluster".
type clusterOptions struct {
	input                       inputFlags
	definition, mode            string
	workers                     int
	dt, unsorted, restart       pixel.Time
	calib, mask, hits, tdc, out string
	quiet                       bool
}

func newClusterCmd(stdout, stderr io.Writer) *cobra.Command {
	o := clusterOptions{input: defaultInput, definition: "local", mode: "auto", dt: 200 * pixel.Nanosecond,
		unsorted: 500 * pixel.Microsecond, restart: pixel.DefaultRestart, out: "-"}
	cmd := &cobra.Command{
		Use:   "cluster [flags] [FILE...]",
		Short: "Cluster pixel hits into particle events",
		Long: fmt.Sprintf(`Cluster Timepix3 hits (.tpx3, .t3pa, Katherine text or CSV) into clusters:
hits connected through 8-neighbouring pixels within a time distance dt.
The files are one stream, in the order given; a hit more than --restart
earlier than the latest (a clock reset, as between runs) finishes every
cluster and starts the time order afresh. Without files, a built-in
simulated sample (1,000,000 gamma-like hits, seed 1) is clustered.

Definitions: local (each link within dt, default), global (within dt of
the cluster's latest hit), window (within dt of the cluster's first hit).
Modes: sequential (one core), lanes (time windows clustered on --workers
cores and stitched), chunked (the paper's chunked union-find); all give
the same clusters in the same order; auto, on more than one core, times
sequential and lanes on the first few million hits and keeps the faster
(sequential without a trial of lanes when it leaves no core idle or
waits for reading or writing).
The clusters file format follows the extension: .csv (default, stdout with
-o -), .clog (ADVACAM cluster log), .parquet (one row per cluster, compact),
.arrow (Arrow IPC/Feather, the Parquet columns uncompressed: the fastest to
write) or .root (a TTree "clusters" with the features and the hits of each
cluster as std::vector branches). --hits writes .csv, .parquet or .arrow.
The outputs with hits (.clog, .root, --hits) hold each cluster's hits
until it ends: once the clusters not yet written hold more than %d
hits (a pixel firing within dt of itself never ends), the run stops with
an error naming that pixel, after writing the clusters of what it read;
--mask drops the hits of such pixels (and of noisy ones) before
clustering, and the summary counts them.
A one-line summary goes to stderr.`, pixel.DefaultMemberLimit),
		Example: `  hitflow cluster -o clusters.csv run.tpx3
  hitflow cluster --definition global --dt 600ns --calib calib/ -o clusters.clog run.t3pa
  hitflow cluster --hits labels.csv --unsorted 1ms -o clusters.csv part1.tpx3 part2.tpx3
  hitflow cluster --mode chunked --workers 2 -o clusters.csv run.tpx3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCluster(cmd.Context(), o, args, stdout, stderr)
		},
	}
	f := cmd.Flags()
	o.input.add(f)
	f.StringVar(&o.definition, "definition", o.definition, "cluster definition: local, global or window")
	f.Var(timeFlag{&o.dt}, "dt", "maximum time distance (200ns, 0.6us, ...)")
	f.StringVar(&o.mode, "mode", o.mode, "clustering algorithm: auto, sequential, lanes or chunked")
	f.IntVar(&o.workers, "workers", 0, "clustering cores (0: all)")
	f.Var(timeFlag{&o.unsorted}, "unsorted", "reorder window of the input; 0 trusts the input order")
	f.Var(timeFlag{&o.restart}, "restart", "a hit this much earlier than the latest restarts the time order (a clock reset, as between runs); 0: 10ms")
	f.StringVar(&o.calib, "calib", "", "directory with the a.txt, b.txt, c.txt, t.txt calibration")
	f.StringVar(&o.mask, "mask", "", "file of pixels whose hits are dropped and counted: lines x y (further columns ignored), or a matrix of 0 and 1 (row = y)")
	f.StringVar(&o.hits, "hits", "", "also write every hit with its cluster id (.csv: x,y,toa_ns,tot,cluster, with energy_kev before cluster when calibrated; .parquet or .arrow)")
	f.StringVar(&o.tdc, "tdc", "", "also write the TDC packets of .tpx3 input (CSV)")
	f.StringVarP(&o.out, "output", "o", o.out, "clusters file (.csv, .clog, .parquet, .arrow or .root); - for CSV on stdout, /dev/null for none")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

func runCluster(ctx context.Context, o clusterOptions, files []string, stdout, stderr io.Writer) error {
	reader, width, height, err := o.input.options()
	if err != nil {
		return err
	}
	def, err := pixel.ParseDefinition(o.definition)
	if err != nil {
		return usageError{err}
	}
	mode, err := pixel.ParseMode(o.mode)
	if err != nil {
		return usageError{err}
	}
	if o.workers < 0 {
		return usagef("--workers must not be negative")
	}
	// Two tables on stdout would come out one after the other, a file no
	// reader takes apart.
	if countStdout(o.out, o.hits, o.tdc) > 1 {
		return usagef("-o, --hits and --tdc write to stdout (-) one at a time; give the others file names")
	}
	job := pipeline.Job{
		Mode:     mode,
		Workers:  o.workers,
		Reader:   reader,
		Unsorted: o.unsorted,
		Cluster:  pixel.Config{Definition: def, Dt: o.dt, Restart: o.restart, Width: width, Height: height},
	}
	if err := job.Cluster.Validate(); err != nil {
		return usageError{err}
	}
	if o.unsorted < 0 || o.unsorted >= job.Cluster.RestartGap() {
		return usagef("--unsorted must be at least 0 and shorter than --restart")
	}
	inputs := append(positional(files...), role("--mask", o.mask))
	if o.calib != "" {
		for _, c := range "abct" {
			inputs = append(inputs, role("--calib", filepath.Join(o.calib, string(c)+".txt")))
		}
	}
	if err := prepare(ctx, inputs, role("-o", o.out), role("--hits", o.hits), role("--tdc", o.tdc)); err != nil {
		return err
	}
	if o.calib != "" {
		if job.Calibration, err = tpx3.LoadCalibration(o.calib); err != nil {
			return err
		}
		if n := job.Calibration.InvalidPixels; n > 0 {
			warnf(stderr, "--calib %s: %d pixels have no valid calibration; their hits get no energy", o.calib, n)
		}
	}
	if o.mask != "" {
		if job.Mask, err = tpx3.LoadMask(o.mask, job.Cluster.Width, job.Cluster.Height); err != nil {
			return err
		}
		if job.Mask.Pixels() == 0 {
			warnf(stderr, "--mask %s masks no pixel", o.mask)
		}
	}

	var total int64
	if len(files) == 0 {
		src, err := builtinSample()
		if err != nil {
			return err
		}
		fmt.Fprintln(stderr, "hitflow: no input files: clustering a built-in simulated sample (gamma, 1000000 hits, seed 1)")
		job.Sources = append(job.Sources, src)
		total += src.Size
	}
	sources, size, closeAll, err := openSources(files, stderr)
	defer closeAll()
	if err != nil {
		return err
	}
	job.Sources, total = append(job.Sources, sources...), total+size

	outs, err := createClusterOutputs(&job, o, stdout)
	if err != nil {
		return err
	}
	bar := newProgress(stderr, total, o.quiet)
	job.Progress = bar.Update

	// Every output is finished and put in place whatever ended the run:
	// the clusters of the hits read before an error or an interruption
	// are complete. Only an output whose own writing failed is discarded.
	sum, runErr := pipeline.Run(ctx, job)
	bar.Done()
	if runErr == nil && sum.Hits == 0 {
		outs.abort()
		fmt.Fprintln(stderr, sum)
		return fmt.Errorf("no hits in %s: nothing written", strings.Join(files, ", "))
	}
	if err := outs.close(); err != nil && runErr == nil {
		runErr = err
	}
	fmt.Fprintln(stderr, sum)
	// Each file may start a new clock; many more restarts mean an input in
	// another order than time (by pixel, say), clustered as little more
	// than single hits.
	if sum.Restarts > int64(sum.Files)+10 {
		warnf(stderr, "the time went back by more than --restart %d times: is the input sorted by time? Sort it, or raise --unsorted and --restart above its disorder", sum.Restarts)
	}
	// Counted in the summary, but a wrong sensor size loses hits without
	// anything failing: say what to set.
	if sum.OutOfRange > 0 {
		warnf(stderr, "%d hits outside the %dx%d sensor (--layout %s) were not clustered: give text inputs their --sensor size, and .tpx3 files the --layout of their chips",
			sum.OutOfRange, width, height, o.input.layout)
	}
	if errors.Is(runErr, context.Canceled) {
		return stopped(ctx, "the clusters of the hits read so far were written")
	}
	if _, ok := errors.AsType[*pixel.MemberLimitError](runErr); ok {
		return fmt.Errorf("%w; the clusters of the hits read so far were written. List the pixel in a --mask file, use a smaller --dt, or write the cluster features only (.csv, .parquet or .arrow, without --hits)", runErr)
	}
	return runErr
}

// clusterOutputs are the files of -o, --hits and --tdc.
type clusterOutputs struct {
	closers []func() error
	aborts  []func()
}

// close finishes every output and puts it in place; it returns the first
// error.
func (c *clusterOutputs) close() error {
	var first error
	for _, f := range c.closers {
		if err := f(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// add takes an output with the functions that finish and discard it.
func (c *clusterOutputs) add(close func() error, abort func()) {
	c.closers, c.aborts = append(c.closers, close), append(c.aborts, abort)
}

// abort discards every output; the names keep their old files.
func (c *clusterOutputs) abort() {
	for _, f := range c.aborts {
		f()
	}
}

// createClusterOutputs creates the writers of -o, --hits and --tdc in the
// job; after an error nothing is left behind.
func createClusterOutputs(job *pipeline.Job, o clusterOptions, stdout io.Writer) (_ *clusterOutputs, err error) {
	outs := &clusterOutputs{}
	defer func() {
		if err != nil {
			outs.abort()
		}
	}()
	cw, err := format.CreateClusters(o.out, stdout)
	if err != nil {
		return nil, formatError(err)
	}
	job.Clusters = cw
	outs.add(cw.Close, func() { outfile.Abort(cw) })
	if o.hits != "" {
		hw, err := format.CreateHits(o.hits, stdout)
		if err != nil {
			return nil, formatError(err)
		}
		job.Hits = hw
		outs.add(hw.Close, func() { outfile.Abort(hw) })
	}
	if o.tdc != "" {
		tf, err := outfile.CreateWriter(o.tdc, stdout)
		if err != nil {
			return nil, err
		}
		tw := tpx3.NewTDCWriter(tf)
		job.TDC = tw.Write
		outs.add(func() error {
			if err := tw.Close(); err != nil {
				tf.Abort()
				return err
			}
			return tf.Close()
		}, tf.Abort)
	}
	return outs, nil
}

// builtinSample simulates the default input as .tpx3 in memory before
// the clock starts: simulated through a pipe, the simulation (several
// times slower than clustering) set the rate in the summary.
func builtinSample() (pipeline.Source, error) {
	var buf bytes.Buffer
	w, err := tpx3.NewHitWriter(&buf, tpx3.TPX3)
	if err != nil {
		return pipeline.Source{}, err
	}
	if err := pixelsim.Generate(pixelsim.Options{Dataset: pixelsim.Datasets[0], Hits: 1000000, Seed: 1}, w.Write); err != nil {
		return pipeline.Source{}, err
	}
	if err := w.Close(); err != nil {
		return pipeline.Source{}, err
	}
	return pipeline.Source{Name: "built-in sample", R: bytes.NewReader(buf.Bytes()), Size: int64(buf.Len())}, nil
}

// formatError makes an unknown output format a usage error.
func formatError(err error) error {
	if errors.Is(err, format.ErrUnknownFormat) {
		return usageError{err}
	}
	return err
}

// countStdout counts the outputs named "-", standard output.
func countStdout(names ...string) int {
	n := 0
	for _, name := range names {
		if name == "-" {
			n++
		}
	}
	return n
}
