package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/format/nrrd"
	"github.com/hitflow/hitflow/format/tiff"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/plot"
)

// imageOptions are the flags of "hitflow image".
type imageOptions struct {
	out     string
	scale   int
	tofBins string
	sensor  sensorFlags
}

func newImageCmd(stderr io.Writer) *cobra.Command {
	o := imageOptions{scale: 1, sensor: defaultSensor}
	cmd := &cobra.Command{
		Use:   "image -o IMAGE [flags] CLUSTERS...",
		Short: "Image the cluster centroids, super-resolved and by time of flight",
		Long: `Count the clusters of the files (.csv, .parquet, .arrow or .root from hitflow
cluster, read as they go) by their centroid, in --scale bins across each
pixel (super-resolution: the centroid of a charge cloud is finer than
the pixel) on the sensor of --layout (as hitflow cluster; or --sensor),
optionally in a stack of images by time of flight
(--tof-bins MIN:MAX:N, the files from hitflow cluster --tof). Pixel p
spans p-0.5 to p+0.5, so bin i spans i/scale-0.5 to (i+1)/scale-0.5.
Memory is the image's, whatever the files.

The output follows the extension:
  .tiff  16-bit grayscale (row 0, the top, is y = 0); a stack writes one
         file per time-of-flight bin, IMAGE_0000.tiff, IMAGE_0001.tiff,
         ... A bin over 65535 clusters is an error: use .nrrd
  .nrrd  32-bit counts, 2D (x, y) or 3D (x, y, time of flight), with the
         bins' spacings and origins in pixels and ns (3D Slicer, Fiji,
         pynrrd, ITK)
  .png   a quick look with a colour bar (.svg too): the sum of the stack
Clusters outside the sensor (--sensor), before the first pulse and
outside the time-of-flight bins are counted and left out; a summary goes
to stderr.`,
		Example: `  hitflow image -o img.png --scale 8 clusters.parquet
  hitflow cluster --tof tdc1r -o run.parquet run.tpx3
  hitflow image -o stack.nrrd --scale 4 --tof-bins 0:20ms:1000 run.parquet
  hitflow image -o frame.tiff --layout quad --tof-bins 1ms:15ms:14 run-0001.parquet run-0002.parquet`,
		Args: needArgs("image needs the clusters files to count"),
		RunE: func(cmd *cobra.Command, args []string) error { return runImage(cmd.Context(), o, args, stderr) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "output", "o", "", "image file: .tiff, .nrrd, or .png or .svg for a look")
	f.IntVar(&o.scale, "scale", o.scale, "bins across each pixel (1 to 256)")
	f.StringVar(&o.tofBins, "tof-bins", "", "a stack of images by time of flight: MIN:MAX:N (0:20ms:1000)")
	o.sensor.add(f, "sensor size in pixels, when larger than the layout's")
	return cmd
}

func runImage(ctx context.Context, o imageOptions, files []string, stderr io.Writer) error {
	var tof analysis.TOFBins
	if o.tofBins != "" {
		var err error
		if tof, err = analysis.ParseTOFBins(o.tofBins); err != nil {
			return usagef("--tof-bins: %w", err)
		}
	}
	ext := strings.ToLower(filepath.Ext(o.out))
	var figure string
	switch ext {
	case ".tiff", ".tif", ".nrrd":
	case ".png", ".svg":
		figure = ext[1:]
	default:
		return usagef("-o %q: want an image file ending in .tiff, .nrrd, .png or .svg", o.out)
	}
	_, width, height, err := o.sensor.size()
	if err != nil {
		return err
	}
	im, err := analysis.NewImage(width, height, o.scale, tof)
	if err != nil {
		return usageError{err}
	}
	names := []string{o.out}
	if (ext == ".tiff" || ext == ".tif") && tof.N > 0 {
		names = stackNames(o.out, tof.N)
	}
	var outputs []outfile.Role
	for _, n := range names {
		outputs = append(outputs, role("-o", n))
	}
	if err := prepare(ctx, positional(files...), outputs...); err != nil {
		return err
	}
	for _, name := range files {
		err := format.ScanClusters(name, func(c *pixel.Clusters) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return im.Fill(c)
		})
		if errors.Is(err, context.Canceled) {
			return stopped(ctx, "no image written: an image of part of the files is not the one asked for")
		}
		if errors.Is(err, analysis.ErrNoTOF) {
			return fmt.Errorf("%s: %w: --tof-bins needs it", name, err)
		}
		if err != nil {
			// A label file fails at its first batch; said so, the user
			// knows which file to give (asked only then: a ROOT file's
			// kind is a walk of all its records).
			if kind, kerr := format.Kind(name); kerr == nil && kind == "hits" {
				return hitsNotClusters(name)
			}
			return err
		}
	}
	line := fmt.Sprintf("%d clusters in a %dx%d image (%d per pixel)", im.Counted, im.Width, im.Height, im.Scale)
	if tof.N > 0 {
		line += fmt.Sprintf(" x %d time-of-flight bins of %s from %s", tof.N, duration(tof.Width()/float64(pixel.Nanosecond)), duration(tof.Min.Ns()))
	}
	line += fmt.Sprintf(" from %s; left out: %d outside the %dx%d sensor", plural(len(files), "file"), im.Outside, width, height)
	if tof.N > 0 {
		line += fmt.Sprintf(", %d before the first pulse, %d outside the time-of-flight bins", im.NoPulse, im.OutOfTOF)
	}
	fmt.Fprintln(stderr, "hitflow: "+line)
	if im.Outside > 0 {
		warnf(stderr, "%d clusters outside the %dx%d sensor were left out: give the --layout or --sensor of the run", im.Outside, width, height)
	}
	if im.Counted == 0 {
		return fmt.Errorf("no clusters in the image: nothing written")
	}
	switch {
	case figure != "":
		title := fmt.Sprintf("cluster centroids%%s (%d clusters)", im.Counted)
		if tof.N > 0 {
			title = fmt.Sprintf("cluster centroids%%s (%d clusters, time of flight %s to %s)", im.Counted, duration(tof.Min.Ns()), duration(tof.Max.Ns()))
		}
		return outfile.Write(o.out, func(w io.Writer) error { return plot.CountImage(w, im.Sum(), im, title, figure) })
	case ext == ".nrrd":
		return outfile.Write(o.out, func(w io.Writer) error { return writeImageNRRD(w, im, line) })
	}
	// Every file is checked before the first is written: a stack stopped
	// half way by a full bin is no stack.
	for k, n := range im.Counts {
		if n > 65535 {
			plane := im.Width * im.Height
			return fmt.Errorf("bin (%d, %d) of image %d holds %d clusters, more than a 16-bit TIFF holds (65535): write .nrrd (32-bit counts), or use a larger --scale or more --tof-bins; nothing written",
				k%plane%im.Width, k%plane/im.Width, k/plane, n)
		}
	}
	plane := im.Width * im.Height
	for k, name := range names {
		if err := outfile.Write(name, func(w io.Writer) error {
			return tiff.WriteCounts(w, im.Width, im.Height, im.Counts[k*plane:(k+1)*plane])
		}); err != nil {
			return err
		}
	}
	if len(names) > 1 {
		fmt.Fprintf(stderr, "hitflow: wrote %s to %s\n", names[0], names[len(names)-1])
	}
	return nil
}

// duration writes ns in the largest unit that keeps it at least 1.
func duration(ns float64) string {
	for _, u := range []struct {
		ns   float64
		name string
	}{{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}} {
		if math.Abs(ns) >= u.ns {
			return strconv.FormatFloat(ns/u.ns, 'g', 6, 64) + u.name
		}
	}
	return strconv.FormatFloat(ns, 'g', 6, 64) + "ns"
}

// stackNames numbers the files of a stack of n images: img.tiff becomes
// img_0000.tiff, img_0001.tiff, ... (more digits past 10000 images).
func stackNames(name string, n int) []string {
	ext := filepath.Ext(name)
	digits := max(4, len(fmt.Sprint(n-1)))
	names := make([]string, n)
	for k := range names {
		names[k] = fmt.Sprintf("%s_%0*d%s", strings.TrimSuffix(name, ext), digits, k, ext)
	}
	return names
}

// writeImageNRRD writes the counts with their axes: x and y in pixels
// (bin edges at i/scale - 0.5), the time of flight in ns.
func writeImageNRRD(w io.Writer, im *analysis.Image, comment string) error {
	step := 1 / float64(im.Scale)
	h := nrrd.Header{
		Sizes:    []int{im.Width, im.Height},
		Spacings: []float64{step, step},
		Mins:     []float64{-0.5, -0.5},
		Labels:   []string{"x", "y"},
		Units:    []string{"pixel", "pixel"},
		Comment:  "hitflow image: " + comment,
	}
	if im.TOF.N > 0 {
		h.Sizes = append(h.Sizes, im.TOF.N)
		h.Spacings = append(h.Spacings, im.TOF.Width()/float64(pixel.Nanosecond))
		h.Mins = append(h.Mins, im.TOF.Min.Ns())
		h.Labels = append(h.Labels, "time of flight")
		h.Units = append(h.Units, "ns")
	}
	return nrrd.WriteUint32(w, h, im.Counts)
}
