package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/tpx3"
	"github.com/hitflow/hitflow/plot"
)

// maskOptions are the flags of "hitflow mask".
type maskOptions struct {
	input  inputFlags
	factor float64
	least  int64
	out    string
	plot   string
	quiet  bool
}

func newMaskCmd(stdout, stderr io.Writer) *cobra.Command {
	o := maskOptions{input: defaultInput, factor: 20, least: 100, out: "-"}
	cmd := &cobra.Command{
		Use:   "mask [flags] FILE...",
		Short: "Find hot pixels and write them as a mask for cluster --mask",
		Long: `Count the hits of every pixel in the files and list the hot ones: those
with at least --min-hits hits and more than --factor times the median of
the pixels that fired. The list (a line "x y", then "x y # N hits" per
pixel, the most hits first; none if none is hot) is what "hitflow
cluster --mask" reads. A pixel that fires within
dt of itself makes a cluster that never ends; a noisy one adds clusters
of its own. The median is that of a typical pixel, which a few hot ones
do not move. --plot draws the hit map (.png or .svg, log scale), the
hot pixels circled. A summary goes to stderr.`,
		Example: `  hitflow mask -o mask.txt run.tpx3
  hitflow cluster --mask mask.txt -o clusters.csv run.tpx3
  hitflow mask --factor 5 --min-hits 1000 --layout quad -o mask.txt part1.tpx3 part2.tpx3
  hitflow mask --plot hitmap.png -o mask.txt run.tpx3`,
		Args: needArgs("mask needs the hit files to count"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMask(cmd.Context(), o, args, stdout, stderr)
		},
	}
	f := cmd.Flags()
	o.input.add(f)
	f.Float64Var(&o.factor, "factor", o.factor, "a hot pixel has more than this times the median hits of the pixels that fired")
	f.Int64Var(&o.least, "min-hits", o.least, "a hot pixel also has at least this many hits")
	f.StringVarP(&o.out, "output", "o", o.out, "mask file; - for stdout")
	f.StringVar(&o.plot, "plot", "", "also draw the hit map to this file (.png or .svg)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

func runMask(ctx context.Context, o maskOptions, files []string, stdout, stderr io.Writer) error {
	if o.factor < 0 || o.least < 0 {
		return usagef("--factor and --min-hits must not be negative")
	}
	format, err := plotFormat(o.plot)
	if err != nil {
		return err
	}
	reader, width, height, err := o.input.options()
	if err != nil {
		return err
	}
	if err := prepare(ctx, positional(files...), role("-o", o.out), role("--plot", o.plot)); err != nil {
		return err
	}
	counts, err := pixel.NewHitCounts(width, height)
	if err != nil {
		return usageError{err}
	}
	sources, total, closeAll, err := openSources(files, stderr)
	defer closeAll()
	if err != nil {
		return err
	}
	bar := newProgress(stderr, total, o.quiet)
	var outside int64
	sum, err := pipeline.Scan(ctx, pipeline.Job{Sources: sources, Reader: reader, Progress: bar.Update}, func(h *pixel.Hits) error {
		outside += counts.Add(h)
		return nil
	})
	bar.Done()
	if errors.Is(err, context.Canceled) {
		return stopped(ctx, "no mask written: a hit map of part of a run would name the wrong pixels")
	}
	if err != nil { // a hit map of part of a run would name the wrong pixels
		return err
	}
	hot, median := counts.Hot(o.factor, o.least)
	var hotHits int64
	for _, p := range hot {
		hotHits += p.Hits
	}
	counted := sum.Hits - sum.OutOfRange - outside
	x0, y0, x1, y1, fired := counts.Fired()
	if !fired {
		return fmt.Errorf("no hits on the %dx%d sensor in %s: no mask written", width, height, strings.Join(files, ", "))
	}
	line := fmt.Sprintf("%d hits in %s on pixels x %d-%d, y %d-%d of the %dx%d sensor, median %g hits per pixel that fired: %d hot pixels with %d hits (%.3g %%)",
		counted, plural(sum.Files, "file"), x0, x1, y0, y1, width, height, median, len(hot), hotHits, 100*float64(hotHits)/float64(max(counted, 1)))
	if n := sum.OutOfRange + outside; n > 0 {
		line += fmt.Sprintf("; %d hits outside the sensor not counted", n)
	}
	w, err := outfile.CreateWriter(o.out, stdout)
	if err != nil {
		return err
	}
	if err = tpx3.WriteMask(w, fmt.Sprintf("hitflow mask --factor %g --min-hits %d: %s", o.factor, o.least, line), hot); err != nil {
		w.Abort()
	} else {
		err = w.Close()
	}
	fmt.Fprintln(stderr, line)
	if err == nil && o.plot != "" {
		title := fmt.Sprintf("hits per pixel, log scale (%d hits, %d hot pixels)", counted, len(hot))
		err = outfile.Write(o.plot, func(w io.Writer) error { return plot.HitMap(w, counts, hot, title, format) })
	}
	return err
}
