package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/tpx3"
	"github.com/hitflow/hitflow/plot"
)

func newTimeWalkCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "timewalk",
		Short: "Measure the time walk of the hits for cluster --timewalk",
	}
	cmd.AddCommand(newTimeWalkFitCmd(stdout, stderr))
	return cmd
}

// timeWalkOptions are the flags of "hitflow timewalk fit".
type timeWalkOptions struct {
	input                 inputFlags
	dt, unsorted, restart pixel.Time
	mask, model, out      string
	plot, sizes           string
	quiet                 bool
}

func newTimeWalkFitCmd(stdout, stderr io.Writer) *cobra.Command {
	o := timeWalkOptions{input: defaultInput, dt: 200 * pixel.Nanosecond, unsorted: 500 * pixel.Microsecond,
		restart: pixel.DefaultRestart, model: "hyperbola", out: "-",
		sizes: fmt.Sprintf("%d:%d", analysis.MinWalkSize, analysis.MaxWalkSize)}
	cmd := &cobra.Command{
		Use:   "fit [flags] FILE...",
		Short: "Fit the time walk of the hits, from their clusters",
		Long: fmt.Sprintf(`Measure how late small signals are time-stamped, from the clusters of the
files (clustered as hitflow cluster does, local definition): each hit's
ToA minus that of its cluster's highest-ToT hit, in clusters of %d to %d
hits (--sizes; 2:4 keeps out tracks at an angle, whose hits arrive over
the drift time along them, which the fit would take for walk). Fit the
model dt(ToT) = a/(ToT-b) + c (ns, ToT in 25 ns ticks) to these
differences, with the errors of a and b; hits further than 6
standard deviations from the fit (pile-up, delta electrons) are left out
and counted. c, a delay common to every hit, cancels in the differences
and is 0: the walk vanishes for large signals. --model table writes the
mean delay of each ToT instead (the fitted walk of the references
added), for walks the hyperbola does not follow. Up to %d hits are
kept for the fit, a uniform sample of the run beyond.
The file is what hitflow cluster --timewalk reads; --plot draws the
delays and the fit (.png or .svg). A summary goes to stderr.`, analysis.MinWalkSize, analysis.MaxWalkSize, analysis.MaxWalkHits),
		Example: `  hitflow timewalk fit -o tw.txt run.tpx3
  hitflow timewalk fit --plot tw.png --mask mask.txt -o tw.txt run.tpx3
  hitflow cluster --timewalk tw.txt -o clusters.parquet run.tpx3`,
		Args: needArgs("timewalk fit needs the hit files to measure"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTimeWalkFit(cmd.Context(), o, args, stdout, stderr)
		},
	}
	f := cmd.Flags()
	o.input.add(f)
	f.Var(timeFlag{&o.dt}, "dt", "maximum time distance of the clustering (200ns, 0.6us, ...)")
	f.Var(timeFlag{&o.unsorted}, "unsorted", "reorder window of the input; 0 trusts the input order")
	f.Var(timeFlag{&o.restart}, "restart", "a hit this much earlier than the latest restarts the time order; 0: 10ms")
	f.StringVar(&o.mask, "mask", "", "file of pixels whose hits are dropped (see hitflow mask)")
	f.StringVar(&o.model, "model", o.model, "hyperbola (a/(ToT-b)+c) or table (a delay per ToT)")
	f.StringVar(&o.sizes, "sizes", o.sizes, "MIN:MAX, the hits of the clusters measured")
	f.StringVarP(&o.out, "output", "o", o.out, "time-walk file; - for stdout")
	f.StringVar(&o.plot, "plot", "", "also draw the delays and the fit to this file (.png or .svg)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

// setWalkSizes sets the cluster sizes of --sizes MIN:MAX.
func setWalkSizes(s *analysis.WalkSample, sizes string) error {
	lo, hi, ok := strings.Cut(sizes, ":")
	fewest, err1 := strconv.Atoi(lo)
	most, err2 := strconv.Atoi(hi)
	if !ok || err1 != nil || err2 != nil {
		return usagef("--sizes %q: want MIN:MAX, as 2:4", sizes)
	}
	if err := s.SetSizes(fewest, most); err != nil {
		return usagef("--sizes %s: %v", sizes, err)
	}
	return nil
}

// walkSink measures the time walk of the clusters it is given.
type walkSink struct{ s *analysis.WalkSample }

func (w walkSink) Write(c *pixel.Clusters) error { return w.s.Add(c) }
func (walkSink) NeedsMembers() bool              { return true }

func runTimeWalkFit(ctx context.Context, o timeWalkOptions, files []string, stdout, stderr io.Writer) error {
	if o.model != "hyperbola" && o.model != "table" {
		return usagef("--model %q: want hyperbola or table", o.model)
	}
	format, err := plotFormat(o.plot)
	if err != nil {
		return err
	}
	reader, width, height, err := o.input.options()
	if err != nil {
		return err
	}
	sample := analysis.NewWalkSample()
	if err := setWalkSizes(sample, o.sizes); err != nil {
		return err
	}
	job := pipeline.Job{
		Reader:   reader,
		Unsorted: o.unsorted,
		Cluster:  pixel.Config{Definition: pixel.Local, Dt: o.dt, Restart: o.restart, Width: width, Height: height},
		Clusters: walkSink{sample},
	}
	if err := job.Validate(); err != nil {
		return usageError{err}
	}
	if err := prepare(ctx, append(positional(files...), role("--mask", o.mask)), role("-o", o.out), role("--plot", o.plot)); err != nil {
		return err
	}
	if o.mask != "" {
		if job.Mask, err = tpx3.LoadMask(o.mask, width, height); err != nil {
			return err
		}
	}
	sources, total, closeAll, err := openSources(files, stderr)
	defer closeAll()
	if err != nil {
		return err
	}
	job.Sources = sources
	bar := newProgress(stderr, total, o.quiet)
	job.Progress = bar.Update
	sum, err := pipeline.Run(ctx, job)
	bar.Done()
	fmt.Fprintln(stderr, sum)
	if errors.Is(err, context.Canceled) {
		return stopped(ctx, "no time walk written: the fit of part of a run is not the one asked for")
	}
	if _, ok := errors.AsType[*pixel.MemberLimitError](err); ok {
		return fmt.Errorf("%w; no time walk written. List the pixel in a --mask file (see hitflow mask)", err)
	}
	if err != nil {
		return err
	}
	fit, err := sample.Fit()
	if err != nil {
		return fmt.Errorf("%s: %w (%d clusters measured): no time walk written", strings.Join(files, ", "), err, sample.Clusters)
	}
	w := fit.Hyperbola
	lo, hi := sample.Sizes()
	line := fmt.Sprintf("a = %.6g +- %.2g ns, b = %.6g +- %.2g ticks, c = 0; %d hits of %d clusters of %d-%d hits, %d outliers left out, rms %.3g ns about the fit",
		w.A, w.AErr, w.B, w.BErr, fit.Hits, fit.Clusters, lo, hi, fit.Outliers, fit.RMS)
	if sample.Skipped > 0 {
		line += fmt.Sprintf("; %d hits passed over (ToT above 1023 in the cluster, or delays beyond 33 ms)", sample.Skipped)
	}
	if o.model == "table" {
		w = analysis.TimeWalk{Table: fit.Table}
	}
	comment := fmt.Sprintf("hitflow timewalk fit --model %s --dt %vns --sizes %d:%d: %s\n%s", o.model, o.dt.Ns(), lo, hi, strings.Join(files, " "), line)
	out, err := outfile.CreateWriter(o.out, stdout)
	if err != nil {
		return err
	}
	if err = analysis.WriteTimeWalk(out, comment, w); err != nil {
		out.Abort()
	} else {
		err = out.Close()
	}
	fmt.Fprintf(stderr, "hitflow: time walk %s\n", line)
	if err == nil && o.plot != "" {
		err = outfile.Write(o.plot, func(w io.Writer) error { return plot.TimeWalk(w, fit, format) })
	}
	return err
}
