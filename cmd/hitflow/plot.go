package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/format/nrrd"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/plot"
)

type plotOptions struct {
	format, out, hits, by string
	formatSet             bool // --format given
	cluster               int64
	width, height         int
	axes                  []int
	layer                 int
	flightPath            float64
}

func newPlotCmd(stdout io.Writer) *cobra.Command {
	o := plotOptions{format: "png", by: "tot", cluster: -1, width: 256, height: 256, axes: []int{0, 1}, layer: -1}
	cmd := &cobra.Command{
		Use:   "plot [flags] FILE... -o PREFIX",
		Short: "Draw figures of a clusters file, a CLUE result or a J-PET image",
		Long: `Draw figures (PNG or SVG) of a result file; what it holds is read from
its extension and columns.

Pixel clusters (.csv, .parquet, .arrow, .root): PREFIX_size (cluster sizes),
PREFIX_spectrum (energy, or ToT sum when uncalibrated), PREFIX_map
(centroids on the sensor) and PREFIX_time (clusters per time bin);
PREFIX_classes of a file with the morphology (cluster --shapes), and
PREFIX_examples, four clusters of each class from the smallest to the
largest, when their hits are there too (a .root file, or --hits);
PREFIX_tof of one with the time of flight (cluster --tof), with
--flight-path also PREFIX_energy and PREFIX_wavelength. These read the
file three times over, a batch at a time, in the memory of the figures
whatever its size (a .root file, and the clusters with --hits, whole);
several clusters files, such as the parts of a run that cluster --rotate
wrote, make one overview.
With --cluster ID, PREFIX_cluster_ID draws that cluster's pixels coloured by
ToT or ToA (--by); its hits come from a .root clusters file or from the
--hits label file.
CLUE results (.csv, .parquet, .arrow, .root): PREFIX, the points coloured by
cluster, seeds marked, outliers grey (--plot-axes, --plot-layer).
J-PET images (.nrrd): PREFIX, the image with a colour bar.
A PREFIX ending in .png or .svg (fig.svg) is the prefix before it, and
the extension sets the format. The names written are printed.`,
		Example: `  hitflow plot -o run clusters.parquet
  hitflow plot -o run clusters-0001.parquet clusters-0002.parquet
  hitflow plot --cluster 42 --by toa -o run clusters.root
  hitflow plot --cluster 42 --hits labels.csv -o run clusters.csv
  hitflow plot --hits labels.parquet -o run shapes.parquet
  hitflow plot --plot-layer 3 --format svg -o calo result.parquet
  hitflow plot -o rec rec.nrrd`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("plot takes a file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.formatSet = cmd.Flags().Changed("format")
			return runPlot(cmd.Context(), o, args, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "output", "o", "", "prefix of the figure files")
	f.StringVar(&o.format, "format", o.format, "png or svg")
	f.Int64Var(&o.cluster, "cluster", o.cluster, "draw the pixels of this cluster id")
	f.StringVar(&o.hits, "hits", "", "per-hit label file (.csv, .parquet or .arrow): the hits of --cluster, and of the example clusters of each class")
	f.StringVar(&o.by, "by", o.by, "colour a cluster's pixels by tot or toa")
	f.Var(sizeFlag{&o.width, &o.height}, "sensor", "sensor size of the centroid map")
	f.IntSliceVar(&o.axes, "plot-axes", o.axes, "the two coordinates of a CLUE plot")
	f.IntVar(&o.layer, "plot-layer", o.layer, "CLUE plot of this layer only (-1: all)")
	f.Float64Var(&o.flightPath, "flight-path", 0, "clusters with a time of flight: also the neutron energy and wavelength spectra over this flight path in metres")
	return cmd
}

func runPlot(ctx context.Context, o plotOptions, ins []string, stdout io.Writer) error {
	if o.out == "" {
		return usagef("plot needs -o PREFIX")
	}
	if o.format != "png" && o.format != "svg" {
		return usagef("--format %q: want png or svg", o.format)
	}
	if prefix, ext := prefixOf(o.out, ".png", ".svg"); ext != "" {
		if o.formatSet && o.format != ext[1:] {
			return usagef("-o %s names a %s figure, but --format is %s", o.out, ext[1:], o.format)
		}
		o.out, o.format = prefix, ext[1:]
	}
	if o.by != "tot" && o.by != "toa" {
		return usagef("--by %q: want tot or toa", o.by)
	}
	if !(o.flightPath >= 0) || math.IsInf(o.flightPath, 0) {
		return usagef("--flight-path %v: want a distance in metres", o.flightPath)
	}
	in := ins[0]
	kind, err := format.Kind(in)
	if err != nil {
		return formatError(err)
	}
	if kind == "hits" {
		return hitsNotClusters(in)
	}
	if len(ins) > 1 {
		// The parts of one run, as cluster --rotate writes them.
		if kind != "clusters" || o.cluster >= 0 || o.hits != "" {
			return usagef("plot takes one file, but for the overview of clusters files (the parts of a run), got %d", len(ins))
		}
		for _, name := range ins[1:] {
			k, err := format.Kind(name)
			if err != nil {
				return formatError(err)
			}
			switch k {
			case "hits":
				return hitsNotClusters(name)
			case "clue":
				return usagef("%s holds a CLUE result, not clusters as %s", name, in)
			case "pet":
				return usagef("%s holds a J-PET image, not clusters as %s", name, in)
			}
		}
	}
	var outs []outfile.Role
	switch {
	case kind == "clusters" && o.cluster < 0:
		for _, fig := range plot.ClusterFigures {
			outs = append(outs, role("-o", o.out+"_"+fig+"."+o.format))
		}
	case kind == "clusters":
		outs = append(outs, role("-o", clusterFigure(o)))
	default:
		outs = append(outs, role("-o", o.out+"."+o.format))
	}
	inputs := []outfile.Role{role("--hits", o.hits)}
	for _, name := range ins {
		inputs = append(inputs, role("", name))
	}
	if err := prepare(ctx, inputs, outs...); err != nil {
		return err
	}
	var names []string
	switch kind {
	case "clusters":
		names, err = plotClusters(ctx, o, ins)
	case "clue":
		names, err = plotCLUE(ctx, o, in)
	case "pet":
		names, err = plotImage(ctx, o, in)
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return err
}

// hitsNotClusters is the usage error for a label file of cluster --hits
// given where a clusters file is wanted.
func hitsNotClusters(name string) error {
	return usagef("%s holds hits with their cluster ids (cluster --hits), not clusters: give the clusters file (plot takes this one with --hits)", name)
}

func plotClusters(ctx context.Context, o plotOptions, ins []string) ([]string, error) {
	in := ins[0]
	if o.cluster < 0 && o.hits == "" && (len(ins) > 1 || !format.HoldsHits(in)) {
		// The figures read the files a batch at a time, in passes: the
		// memory of the figures, whatever the files.
		scan := func(fn func(*pixel.Clusters) error) error {
			for _, name := range ins {
				err := format.ScanClusters(name, func(c *pixel.Clusters) error {
					if ctx.Err() != nil {
						return stopped(ctx, "no figure written")
					}
					return fn(c)
				})
				if err != nil {
					return err
				}
			}
			return nil
		}
		ov, err := untilStopped(ctx, "no figure written", func() (*plot.Overview, error) {
			return plot.NewOverview(scan, o.width, o.height, o.flightPath)
		})
		if err != nil {
			return nil, err
		}
		return ov.Write(o.out, o.format)
	}
	c, err := untilStopped(ctx, "no figure written", func() (*pixel.Clusters, error) { return format.ReadClusters(in) })
	if err != nil {
		return nil, err
	}
	if o.cluster < 0 {
		if o.hits != "" {
			l, err := readHits(ctx, o.hits)
			if err != nil {
				return nil, err
			}
			if err := l.Attach(c); err != nil {
				return nil, fmt.Errorf("--hits %s is not of %s: %w", o.hits, in, err)
			}
		}
		return plot.WriteClusterFigures(o.out, c, o.width, o.height, o.flightPath, o.format)
	}
	var hits *pixel.Hits
	switch {
	case o.hits != "":
		l, err := readHits(ctx, o.hits)
		if err != nil {
			return nil, err
		}
		hits = &pixel.Hits{}
		for i, label := range l.Labels {
			if label == o.cluster {
				hits.AppendFrom(&l.Hits, i)
			}
		}
	case c.HasMembers():
		for i, id := range c.ID {
			if id == o.cluster {
				hits = &pixel.Hits{}
				hits.AppendRange(&c.Members, c.Start[i], c.Start[i+1])
			}
		}
	default:
		return nil, usagef("--cluster needs the hits: a .root clusters file or --hits FILE")
	}
	if hits == nil || hits.Len() == 0 {
		return nil, fmt.Errorf("%s: no hits of cluster %d", in, o.cluster)
	}
	name := clusterFigure(o)
	title := fmt.Sprintf("cluster %d: %s, colour = %s", o.cluster, plural(hits.Len(), "hit"), map[string]string{"tot": "ToT (25 ns)", "toa": "ToA - first (ns)"}[o.by])
	err = outfile.Write(name, func(w io.Writer) error { return plot.ClusterHits(w, hits, o.by == "toa", title, o.format) })
	return []string{name}, err
}

// clusterFigure names the figure of --cluster.
func clusterFigure(o plotOptions) string {
	return fmt.Sprintf("%s_cluster_%d.%s", o.out, o.cluster, o.format)
}

// readHits reads the label file of --hits, until ctx ends.
func readHits(ctx context.Context, name string) (*pixel.Labelled, error) {
	return untilStopped(ctx, "no figure written", func() (*pixel.Labelled, error) { return format.ReadHits(name) })
}

func plotCLUE(ctx context.Context, o plotOptions, in string) ([]string, error) {
	type clueFile struct {
		tab *cluecsv.Table
		r   *clue.Result
	}
	read, err := untilStopped(ctx, "no figure written", func() (clueFile, error) {
		tab, r, err := format.ReadCLUE(in)
		return clueFile{tab, r}, err
	})
	if err != nil {
		return nil, err
	}
	tab, r := read.tab, read.r
	if err := checkPlotView(tab, o.axes, o.layer); err != nil {
		return nil, err
	}
	po := plot.CLUEOptions{X: o.axes[0], Y: o.axes[1], Names: tab.Coords, Format: o.format, Title: filepath.Base(in)}
	if o.layer >= 0 {
		l := int32(o.layer)
		po.Layer = &l
		po.Title = fmt.Sprintf("%s, layer %d", filepath.Base(in), l)
	}
	name := o.out + "." + o.format
	err = outfile.Write(name, func(w io.Writer) error { return plot.CLUE(w, &tab.Points, r, po) })
	return []string{name}, err
}

func plotImage(ctx context.Context, o plotOptions, in string) ([]string, error) {
	img, err := untilStopped(ctx, "no figure written", func() (jpet.Image, error) {
		f, err := os.Open(in)
		if err != nil {
			return jpet.Image{}, err
		}
		defer f.Close()
		return nrrd.ReadImage(f, in)
	})
	if err != nil {
		return nil, err
	}
	name := o.out + "." + o.format
	err = outfile.Write(name, func(w io.Writer) error { return plot.Image(w, img, filepath.Base(in), o.format) })
	return []string{name}, err
}
