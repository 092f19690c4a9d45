package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/internal/prefault"
	"github.com/hitflow/hitflow/online"
	"github.com/hitflow/hitflow/online/kafka"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/pixelcl"
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
	live                        liveOptions
	keep                        []string
	classes                     string
	shapes                      bool
	tof                         string
	flightPath                  float64
	period                      time.Duration
	timewalk                    string
	kafka                       kafkaFlags
	group                       groupFlags
	device                      string
}

func newClusterCmd(stdout, stderr io.Writer) *cobra.Command {
	o := clusterOptions{input: defaultInput, definition: "local", mode: "auto", dt: 200 * pixel.Nanosecond,
		unsorted: 500 * pixel.Microsecond, restart: pixel.DefaultRestart, out: "-", live: defaultLive}
	cmd := &cobra.Command{
		Use:   "cluster [flags] [FILE... | tcp://HOST:PORT | kafka://BROKER/TOPIC | -]",
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
waits for reading or writing). --mode chunked --device opencl clusters
the chunks on an OpenCL device (local definition; the other definitions
run on the CPU cores, without --device), and sorts there the batches of
the reorder window that are not nearly in order.
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
A one-line summary goes to stderr.

Live data: tcp://HOST:PORT connects to a readout serving the raw .tpx3
stream (SERVAL's raw TCP destination; hitflow simulate pixel --serve),
- reads standard input, --follow FILE a file still being written, and
kafka://BROKER[,BROKER...]/TOPIC the raw .tpx3 chunks published on a
Kafka topic's partition (--partition, --from-end, --offset; until
stopped, or --idle without a message).
The input is received into --buffer of memory, then into files in
--spool, so that it never waits for the clustering (without --spool the
source waits; the summary says how long). Clusters reach text outputs
and an Arrow stream on standard output (-o -.arrow, for a reader such as
pyarrow.ipc.open_stream) within --latency of the input that closed them.
The first Ctrl-C (or SIGTERM) stops the input: everything received is
clustered and written, exit 0. A second stops at once, the outputs
completed. On a terminal a status line shows the rates, the buffer and
the lag behind the source.
--rotate closes the outputs (-o and --hits) and begins numbered new
ones, each a complete file: clusters.parquet becomes clusters-0001.parquet,
clusters-0002.parquet, ... --metrics serves Prometheus metrics.
-o kafka://BROKER[,BROKER...]/TOPIC publishes the clusters on Kafka as
ESS ev44 messages, one event a cluster (--source, --super-resolution,
--compression, --start; docs/live.md).`, pixel.DefaultMemberLimit),
		Example: `  hitflow cluster -o clusters.csv run.tpx3
  hitflow cluster --definition global --dt 600ns --calib calib/ -o clusters.clog run.t3pa
  hitflow cluster --hits labels.csv --unsorted 1ms -o clusters.csv part1.tpx3 part2.tpx3
  hitflow cluster --mode chunked --workers 2 -o clusters.csv run.tpx3
  hitflow cluster --mode chunked --device opencl -o clusters.arrow run.tpx3
  hitflow cluster --spool /data/spool --rotate 10m -o live.parquet tcp://127.0.0.1:8451
  hitflow cluster -o -.arrow tcp://127.0.0.1:8451 | python3 consume.py
  hitflow cluster --source det1 --tof tdc1r -o kafka://broker:9092/det1_events tcp://127.0.0.1:8451`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.live.idleSet = cmd.Flags().Changed("idle")
			return runCluster(cmd.Context(), o, args, cmd.InOrStdin(), stdout, stderr)
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
	f.StringSliceVar(&o.keep, "keep", nil, "write only the clusters of these morphology classes: dot, small_blob, curly_track, heavy_blob, heavy_track, straight_track")
	f.StringVar(&o.classes, "classes", "", "thresholds of the classes of --keep and --shapes, lines \"name value\" (see docs/clustering.md)")
	f.BoolVar(&o.shapes, "shapes", false, "add each cluster's morphology and class to -o (.csv, .parquet, .arrow or .root): pixels, inner, roundness, linearity, length, width, class")
	f.StringVar(&o.tof, "tof", "", "add each cluster's time of flight from the TDC pulses of .tpx3 input: tdc1r, tdc1f, tdc2r or tdc2f (input 1 or 2, rising or falling edge)")
	f.Float64Var(&o.flightPath, "flight-path", 0, "with --tof: the flight path in metres; adds the neutron energy and wavelength")
	f.DurationVar(&o.period, "period", 0, "with --tof: the pulse period (71.43ms at 14 Hz); gaps over 1.5 periods count the missing pulses")
	f.StringVar(&o.timewalk, "timewalk", "", "correct every hit's time by the time walk of this file (from hitflow timewalk fit) before sorting and clustering")
	o.kafka.add(f)
	o.group.add(f)
	o.live.add(f)
	deviceFlag(f, &o.device)
	return cmd
}

func runCluster(ctx context.Context, o clusterOptions, files []string, stdin io.Reader, stdout, stderr io.Writer) error {
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
	if err := o.checkDevice(def, mode); err != nil {
		return err
	}
	// Two tables on stdout would come out one after the other, a file no
	// reader takes apart.
	if countStdout(o.out, o.hits, o.tdc) > 1 {
		return usagef("-o, --hits and --tdc write to stdout (-) one at a time; give the others file names")
	}
	if err := o.checkGroup(files); err != nil {
		return err
	}
	if err := sameTopic(o.out, files); err != nil {
		return err
	}
	liveInput, err := o.live.input(files)
	if err != nil {
		return err
	}
	var rotation online.Rotation
	if o.live.rotate != "" {
		if rotation, err = online.ParseRotation(o.live.rotate); err != nil {
			return usageError{err}
		}
		if countStdout(o.out, o.hits) > 0 || o.out == os.DevNull {
			return usagef("--rotate writes numbered files: give -o (and --hits) file names")
		}
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
	filter, err := classFilter(o.keep, o.classes, o.shapes)
	if err != nil {
		return err
	}
	tof, edge, err := o.timeOfFlight()
	if err != nil {
		return err
	}
	job.Filter, job.FilterHits = analyses(tof, filter), filter != nil
	if o.timewalk != "" {
		if job.Correction, err = loadTimeWalk(o.timewalk); err != nil {
			return err
		}
		if o.unsorted+job.Correction.Spread() >= job.Cluster.RestartGap() {
			return usagef("--timewalk %s moves hits by up to %v ns: --unsorted plus that must be shorter than --restart", o.timewalk, job.Correction.Spread().Ns())
		}
	}
	publish := kafka.IsTarget(o.out)
	if err := o.kafka.check(publish, o); err != nil {
		return err
	}
	inputs := []outfile.Role{role("--mask", o.mask), role("--classes", o.classes), role("--timewalk", o.timewalk)}
	if liveInput == "" || o.live.follow {
		inputs = append(inputs, positional(files...)...)
	}
	if o.calib != "" {
		for _, c := range "abct" {
			inputs = append(inputs, role("--calib", filepath.Join(o.calib, string(c)+".txt")))
		}
	}
	outputs := []outfile.Role{role("-o", o.out), role("--hits", o.hits), role("--tdc", o.tdc)}
	if publish {
		outputs[0].Name = "" // a topic, not a file
	}
	if rotation != (online.Rotation{}) {
		outputs[0].Name, outputs[1].Name = online.PartName(o.out, 1), partName(o.hits, 1)
	}
	if err := prepare(ctx, inputs, outputs...); err != nil {
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

	if o.device != "cpu" {
		// The sort has a context of its own: the reorder stage runs beside
		// the clustering.
		lab, closeLabeler, err := openOn(o.device, pixelcl.New)
		if err != nil {
			return err
		}
		defer closeLabeler()
		sorter, closeSorter, err := openOn(o.device, pixelcl.NewSorter)
		if err != nil {
			return err
		}
		defer closeSorter()
		job.Labeler, job.KeySorter = lab, sorter
	}
	if o.group.name != "" {
		var tofEdge *tpx3.TDCEdge
		if tof != nil {
			tofEdge = &edge
		}
		return runGroup(ctx, o, files[0], job, tofEdge, stderr)
	}

	// A live run goes on after the first signal, which stops its input.
	runCtx := ctx
	var live *liveRun
	var total int64
	switch {
	case liveInput != "":
		stream, reader, err := o.live.open(ctx, liveInput, stdin)
		if err != nil {
			if _, ok := errors.AsType[usageError](err); ok {
				return err
			}
			return fmt.Errorf("%s: %w", liveInput, err)
		}
		if reader != nil {
			defer reader.Close() // after the stream's receiver is done
		}
		defer stream.Close()
		if live, err = startLive(&job, stream, o.live); err != nil {
			return err
		}
		live.kafka = reader
		var stop func()
		runCtx, stop = untilSecondSignal(ctx)
		defer stop()
	case len(files) == 0:
		src, err := builtinSample()
		if err != nil {
			return err
		}
		fmt.Fprintln(stderr, "hitflow: no input files: clustering a built-in simulated sample (gamma, 1000000 hits, seed 1)")
		job.Sources = append(job.Sources, src)
		total += src.Size
	default:
		sources, size, closeAll, err := openSources(files, stderr)
		defer closeAll()
		if err != nil {
			return err
		}
		job.Sources, total = sources, size
	}
	if live == nil && o.live.metrics != "" {
		live = &liveRun{mon: online.NewMonitor(nil)}
	}
	if live != nil {
		if err := live.monitor(&job, o.live, stderr, o.quiet); err != nil {
			return err
		}
		defer live.done()
	}

	var pub *kafka.Publisher
	if publish {
		if pub, err = o.kafka.publisher(ctx, o.out, width, height); err != nil {
			return err
		}
	}
	outs, err := createClusterOutputs(&job, o, rotation, inputs, pub, stdout)
	if err != nil {
		return err
	}
	if tof != nil {
		job.TDC = referencesTo(tof, edge, job.TDC)
	}
	bar := newProgress(stderr, total, o.quiet)
	job.Progress = bar.Update

	// Every output is finished and put in place whatever ended the run:
	// the clusters of the hits read before an error or an interruption
	// are complete. Only an output whose own writing failed is discarded.
	sum, runErr := pipeline.Run(runCtx, job)
	bar.Done()
	if live != nil {
		live.done()
	}
	if runErr == nil && sum.Hits == 0 {
		outs.abort()
		fmt.Fprintln(stderr, sum)
		if liveInput != "" {
			files = []string{liveInput}
		}
		return fmt.Errorf("no hits in %s: nothing written", strings.Join(files, ", "))
	}
	if err := outs.close(); err != nil && runErr == nil {
		runErr = err
	}
	fmt.Fprintln(stderr, sum)
	if live != nil && live.stream != nil {
		fmt.Fprintln(stderr, live.summary())
	}
	if len(o.keep) > 0 {
		fmt.Fprintln(stderr, keptLine(filter, sum.Clusters))
	}
	if pub != nil {
		fmt.Fprintln(stderr, publishedLine(pub, o.out))
	}
	if tof != nil {
		fmt.Fprintf(stderr, "hitflow: time of flight from %v: %d clusters before the first pulse (without one)", edge, tof.Before())
		if o.period > 0 {
			fmt.Fprintf(stderr, ", %d pulses missing", tof.Missing())
		}
		fmt.Fprintln(stderr)
		if sum.TDC == 0 {
			warnf(stderr, "--tof: the input has no TDC packets (they come in .tpx3 files): no cluster has a time of flight")
		}
	}
	if n := outs.parts(); n > 1 {
		fmt.Fprintf(stderr, "hitflow: wrote %d parts: %s to %s\n", n, online.PartName(o.out, 1), online.PartName(o.out, n))
	}
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
	// A live run stopped by a second signal may have read its input to
	// the end before: it was still cut short.
	if errors.Is(runErr, context.Canceled) || runCtx != ctx && runCtx.Err() != nil {
		return stopped(ctx, "the clusters of the hits read so far were written")
	}
	if liveInput != "" && runErr == nil && ctx.Err() != nil {
		fmt.Fprintf(stderr, "hitflow: %v: the input was stopped; everything received was clustered and written\n", context.Cause(ctx))
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
	rotator *online.Rotator // with --rotate
}

// parts is the number of parts of a rotated run's outputs; 1 otherwise.
func (c *clusterOutputs) parts() int {
	if c.rotator == nil {
		return 1
	}
	return c.rotator.Parts()
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
func createClusterOutputs(job *pipeline.Job, o clusterOptions, rot online.Rotation, inputs []outfile.Role, pub *kafka.Publisher, stdout io.Writer) (_ *clusterOutputs, err error) {
	outs := &clusterOutputs{}
	defer func() {
		if err != nil {
			outs.abort()
		}
	}()
	if rot != (online.Rotation{}) {
		r, err := online.NewRotator(rot, func(n int) (online.Part, error) {
			// Checked like the first part was before the run: a later
			// one must not replace an input that bears its name.
			out, hits := online.PartName(o.out, n), partName(o.hits, n)
			if err := outfile.Check(inputs, []outfile.Role{role("-o", out), role("--hits", hits)}); err != nil {
				return online.Part{}, err
			}
			return createPart(out, hits, o.columns(), stdout)
		})
		if err != nil {
			return nil, err
		}
		job.Clusters, outs.rotator = r, r
		if o.hits != "" {
			job.Hits = r
		}
		outs.add(r.Close, r.Abort)
	} else if pub != nil {
		job.Clusters = pub
		outs.add(pub.Close, pub.Abort)
		if o.hits != "" {
			h, err := format.CreateHits(o.hits, stdout)
			if err != nil {
				return nil, formatError(err)
			}
			job.Hits = h
			outs.add(h.Close, func() { outfile.Abort(h) })
		}
	} else {
		p, err := createPart(o.out, o.hits, o.columns(), stdout)
		if err != nil {
			return nil, err
		}
		job.Clusters = p.Clusters
		outs.add(p.Clusters.Close, func() { outfile.Abort(p.Clusters) })
		if p.Hits != nil {
			job.Hits = p.Hits
			outs.add(p.Hits.Close, func() { outfile.Abort(p.Hits) })
		}
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

// columns are the optional columns of -o.
func (o clusterOptions) columns() format.Columns {
	return format.Columns{Shapes: o.shapes, TOF: o.tof != "", FlightPath: o.flightPath}
}

// timeOfFlight is the time of flight of --tof, and its edge; nil
// without.
func (o clusterOptions) timeOfFlight() (*analysis.TOF, tpx3.TDCEdge, error) {
	if o.tof == "" {
		if o.flightPath != 0 || o.period != 0 {
			return nil, 0, usagef("--flight-path and --period are for --tof")
		}
		return nil, 0, nil
	}
	edges := map[string]tpx3.TDCEdge{"tdc1r": tpx3.TDC1Rise, "tdc1f": tpx3.TDC1Fall, "tdc2r": tpx3.TDC2Rise, "tdc2f": tpx3.TDC2Fall}
	edge, ok := edges[strings.ToLower(o.tof)]
	if !ok {
		return nil, 0, usagef("--tof %q: want tdc1r, tdc1f, tdc2r or tdc2f", o.tof)
	}
	if !(o.flightPath >= 0) || math.IsInf(o.flightPath, 0) || o.period < 0 {
		return nil, 0, usagef("--flight-path and --period must not be negative")
	}
	return &analysis.TOF{Period: pixel.Time(o.period.Nanoseconds()) * pixel.Nanosecond}, edge, nil
}

// referencesTo passes the times of the TDC packets of edge to tof, and
// every packet on to next (the --tdc file) if there is one.
func referencesTo(tof *analysis.TOF, edge tpx3.TDCEdge, next func([]tpx3.TDC) error) func([]tpx3.TDC) error {
	var times []pixel.Time
	return func(ps []tpx3.TDC) error {
		times = times[:0]
		for _, p := range ps {
			if p.Edge == edge {
				times = append(times, p.Time)
			}
		}
		tof.AddReferences(times)
		if next != nil {
			return next(ps)
		}
		return nil
	}
}

// analyses is the job's filter: the time of flight, then the shapes and
// the classes kept; nil for neither.
func analyses(tof *analysis.TOF, filter *analysis.Filter) func(*pixel.Clusters) (*pixel.Clusters, error) {
	switch {
	case tof == nil && filter == nil:
		return nil
	case tof == nil:
		return filter.Apply
	}
	return func(c *pixel.Clusters) (*pixel.Clusters, error) {
		tof.Assign(c)
		if filter == nil {
			return c, nil
		}
		return filter.Apply(c)
	}
}

// loadTimeWalk reads the time-walk correction of --timewalk.
func loadTimeWalk(name string) (*analysis.WalkCorrection, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := analysis.ReadTimeWalk(f, name)
	if err != nil {
		return nil, err
	}
	c, err := w.Correction()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// classFilter is the filter of --keep (or of every class, for --shapes)
// with the thresholds of --classes, or nil without either.
func classFilter(keep []string, rules string, shapes bool) (*analysis.Filter, error) {
	if len(keep) == 0 && !shapes {
		if rules != "" {
			return nil, usagef("--classes sets the thresholds of the classes of --keep and --shapes; give one of them")
		}
		return nil, nil
	}
	f := &analysis.Filter{Rules: analysis.DefaultRules}
	if len(keep) == 0 {
		f.KeepAll()
	}
	for _, name := range keep {
		c, err := analysis.ParseClass(strings.TrimSpace(name))
		if err != nil {
			return nil, usagef("--keep: %w", err)
		}
		f.Keep[c] = true
	}
	if rules != "" {
		r, err := os.Open(rules)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		if f.Rules, err = analysis.ReadRules(r, rules); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// keptLine says how many clusters --keep wrote and dropped, by class.
func keptLine(f *analysis.Filter, clusters int64) string {
	var dropped int64
	var by []string
	for _, c := range analysis.Classes {
		if n := f.Dropped[c]; n > 0 {
			dropped += n
			by = append(by, fmt.Sprintf("%v %d", c, n))
		}
	}
	line := fmt.Sprintf("hitflow: --keep wrote %d of %d clusters", clusters-dropped, clusters)
	if len(by) > 0 {
		line += "; dropped " + strings.Join(by, ", ")
	}
	return line
}

// createPart creates the clusters file out, with the optional columns,
// and, unless hits is "", the hits file; after an error nothing is left
// behind.
func createPart(out, hits string, cols format.Columns, stdout io.Writer) (online.Part, error) {
	cw, err := format.CreateClustersWith(out, stdout, cols)
	if err != nil {
		return online.Part{}, formatError(err)
	}
	p := online.Part{Clusters: cw}
	if hits != "" {
		if p.Hits, err = format.CreateHits(hits, stdout); err != nil {
			outfile.Abort(cw)
			return online.Part{}, formatError(err)
		}
	}
	return p, nil
}

// partName is the name of part n of a rotated output, or "" for none.
func partName(name string, n int) string {
	if name == "" {
		return ""
	}
	return online.PartName(name, n)
}

// builtinSample simulates the default input as .tpx3 in memory before
// the clock starts: simulated through a pipe, the simulation (several
// times slower than clustering) set the rate in the summary.
func builtinSample() (pipeline.Source, error) {
	const hits = 1000000
	// 8 bytes a hit and the chunks' headers, in huge pages: grown once.
	buf := bytes.NewBuffer(prefault.Make[byte](0, hits*81/10))
	w, err := tpx3.NewHitWriter(buf, tpx3.TPX3)
	if err != nil {
		return pipeline.Source{}, err
	}
	if err := pixelsim.Generate(pixelsim.Options{Dataset: pixelsim.Datasets[0], Hits: hits, Seed: 1}, w.Write); err != nil {
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

// checkDevice refuses a --device that cannot cluster this run: a device
// runs the chunk step of mode chunked, for the local definition.
func (o clusterOptions) checkDevice(def pixel.Definition, mode pixel.Mode) error {
	switch {
	case o.device == "cpu":
		return nil
	case mode != pixel.Chunked:
		return usagef("--device %s clusters with --mode chunked, not %v", o.device, mode)
	case def != pixel.Local:
		return usagef("--device %s clusters the local definition; the %v definition runs on the CPU cores (leave out --device)", o.device, def)
	case o.group.name != "":
		return usagef("--device %s and --group: a consumer group clusters on the CPU cores", o.device)
	}
	return checkDevice(o.device)
}
