package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecl"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/clue/cluesim"
	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/internal/ctxio"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/plot"
)

type clueOptions struct {
	dc, rhoc, deltac, deltao, tile float64
	kernel, out, plot              string
	axes                           []int
	plotLayer                      int
	workers                        int
	device                         string
}

func newClueCmd(stdout, stderr io.Writer) *cobra.Command {
	o := clueOptions{kernel: "flat", out: "-", axes: []int{0, 1}, plotLayer: -1}
	cmd := &cobra.Command{
		Use:   "clue --dc D --rhoc R [flags] -o out.csv in.csv",
		Short: "Density clustering of weighted points (CLUE)",
		Long: `Cluster weighted 2D or N-dimensional points, layer by layer, with CLUE
(Rovere et al. 2020). The input CSV names its coordinate columns (x, y[, z]
or x0..xN), an optional integer layer column, an optional integer event
column (many independent events clustered in one run, each numbering its
clusters from 0) and the weight column; a file without a header has the
four columns x,y,layer,weight. The output
repeats the input columns and adds rho, delta (inf when there is no
nearest-higher), nh, isSeed and clusterId (-1 for outliers); -o picks
CSV, Parquet, Arrow or ROOT (a TTree "clue", one entry per point) by extension.
deltac and deltao default to dc. Kernels: flat, cms, gaussian[:std[:amp]],
exponential[:rate[:amp]]. --device opencl runs it on an OpenCL device,
with the same results to the bit.`,
		Example: `  hitflow clue --dc 20 --rhoc 10 -o out.csv sissa_4000.csv
  hitflow clue --dc 2.5 --rhoc 2 --deltao 7.5 --deltac 7.5 --plot toy.png -o out.csv toyDetector_5000.csv
  hitflow clue --dc 1 --rhoc 5 --deltac 2 --deltao 2 --kernel gaussian:0.5 --plot-axes 0,2 --plot blob.png -o - blob.csv
  hitflow clue --dc 3 --rhoc 8 --deltac 5 --deltao 5 -o result.parquet calo.csv
  hitflow clue --dc 3 --rhoc 8 --deltac 5 --deltao 5 --device opencl -o out.csv calo.csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("clue takes one input file, got %d", len(args))
			}
			for _, f := range []string{"dc", "rhoc"} {
				if !cmd.Flags().Changed(f) {
					return usagef("clue needs --%s", f)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("deltac") {
				o.deltac = o.dc
			}
			if !cmd.Flags().Changed("deltao") {
				o.deltao = o.dc
			}
			return runClue(cmd.Context(), o, args[0], stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.dc, "dc", 0, "density cut-off distance")
	f.Float64Var(&o.rhoc, "rhoc", 0, "minimum density of a seed")
	f.Float64Var(&o.deltac, "deltac", 0, "minimum separation of a seed (default dc)")
	f.Float64Var(&o.deltao, "deltao", 0, "minimum separation of an outlier (default dc)")
	f.StringVar(&o.kernel, "kernel", o.kernel, "density kernel: flat, cms, gaussian[:std[:amp]], exponential[:rate[:amp]]")
	f.Float64Var(&o.tile, "tile", 0, "grid tile size (0: automatic, from dm and the extent)")
	f.IntVar(&o.workers, "workers", 0, "worker goroutines (0: all cores)")
	deviceFlag(f, &o.device)
	f.StringVarP(&o.out, "output", "o", o.out, "output file (.csv, .parquet, .arrow or .root); - for CSV on stdout, /dev/null for none")
	f.StringVar(&o.plot, "plot", "", "also draw the points coloured by cluster (.png or .svg)")
	f.IntSliceVar(&o.axes, "plot-axes", o.axes, "the two coordinates the plot shows")
	f.IntVar(&o.plotLayer, "plot-layer", o.plotLayer, "plot only this layer (-1: all)")
	return cmd
}

func runClue(ctx context.Context, o clueOptions, in string, stdout, stderr io.Writer) error {
	if o.workers < 0 {
		return usagef("--workers must not be negative")
	}
	if err := checkDevice(o.device); err != nil {
		return err
	}
	if o.device != "cpu" && o.workers != 0 {
		return usagef("--workers is for --device cpu")
	}
	k, err := clue.ParseKernel(o.kernel, o.dc)
	if err != nil {
		return usageError{err}
	}
	p := clue.Params{DC: o.dc, RhoC: o.rhoc, DeltaC: o.deltac, DeltaO: o.deltao, Kernel: k, TileSize: o.tile}
	if err := p.Validate(); err != nil {
		return usageError{err}
	}
	if len(o.axes) != 2 {
		return usagef("--plot-axes takes two coordinates, got %v", o.axes)
	}
	if _, err := plotFormat(o.plot); err != nil { // before the clustering, not after
		return err
	}
	if err := prepare(ctx, positional(in), role("-o", o.out), role("--plot", o.plot)); err != nil {
		return err
	}
	// The device is ready before the input is read: a machine without
	// one fails at once.
	run, where, closeDevice, err := clueRunner(o)
	if err != nil {
		return err
	}
	defer closeDevice()
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	tab, err := cluecsv.Read(ctxio.Reader{Ctx: ctx, R: f}, in)
	f.Close()
	if errors.Is(err, context.Canceled) {
		return stopped(ctx, "nothing written")
	}
	if err != nil {
		return err
	}
	if tab.Points.Len() == 0 {
		return fmt.Errorf("%s: no points, only a header: nothing written", in)
	}
	if o.plot != "" {
		if err := checkPlotView(tab, o.axes, o.plotLayer); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return stopped(ctx, "nothing written")
	}
	start := time.Now()
	r, err := run(&tab.Points, p)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return stopped(ctx, "nothing written")
	}
	if o.out != os.DevNull {
		if err := format.WriteCLUE(o.out, stdout, tab, r); err != nil {
			return formatError(err)
		}
	}
	if o.plot != "" {
		if err := writeCluePlot(o, in, tab, r); err != nil {
			return err
		}
	}
	seeds := 0
	for _, s := range r.IsSeed {
		if s {
			seeds++
		}
	}
	fmt.Fprintf(stderr, "points %d, seeds %d, clusters %d, outliers %d, %.1f ms (%s)\n",
		tab.Points.Len(), seeds, r.Clusters, r.Outliers, float64(elapsed.Microseconds())/1000, where)
	return nil
}

// clueRunner returns what clusters the points on --device, where it runs
// for the summary, and what closes the device.
func clueRunner(o clueOptions) (run func(*clue.Points, clue.Params) (*clue.Result, error), where string, close func() error, err error) {
	if o.device == "cpu" {
		c := &clue.Clusterer{Workers: o.workers}
		return c.Run, fmt.Sprintf("%d workers", workersOf(o.workers)), func() error { return nil }, nil
	}
	dev, err := openDevice(o.device)
	if err != nil {
		return nil, "", nil, err
	}
	c, err := cluecl.New(dev)
	if err != nil {
		return nil, "", nil, errors.Join(err, dev.Close())
	}
	return c.Run, c.Where(), func() error { return errors.Join(c.Close(), dev.Close()) }, nil
}

func workersOf(w int) int {
	if w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// checkPlotView refuses, before the clustering, plot axes the points do
// not have and a layer without points.
func checkPlotView(tab *cluecsv.Table, axes []int, layer int) error {
	if len(axes) != 2 {
		return usagef("--plot-axes takes two coordinates, got %v", axes)
	}
	for _, a := range axes {
		if a < 0 || a >= len(tab.Coords) {
			return usagef("--plot-axes %d,%d: the points have coordinates 0 to %d (%s)", axes[0], axes[1], len(tab.Coords)-1, strings.Join(tab.Coords, ", "))
		}
	}
	if layer >= 0 {
		if !tab.Layer {
			return usagef("--plot-layer %d: the points have no layer column", layer)
		}
		if !slices.Contains(tab.Points.Layer, int32(layer)) {
			lo, hi := slices.Min(tab.Points.Layer), slices.Max(tab.Points.Layer)
			return usagef("--plot-layer %d: no point is on that layer (layers %d to %d)", layer, lo, hi)
		}
	}
	return nil
}

func writeCluePlot(o clueOptions, in string, tab *cluecsv.Table, r *clue.Result) error {
	format, err := plotFormat(o.plot)
	if err != nil {
		return err
	}
	po := plot.CLUEOptions{X: o.axes[0], Y: o.axes[1], Names: tab.Coords, Format: format, Title: filepath.Base(in)}
	if o.plotLayer >= 0 {
		l := int32(o.plotLayer)
		po.Layer = &l
		po.Title = fmt.Sprintf("%s, layer %d", filepath.Base(in), l)
	}
	return outfile.Write(o.plot, func(w io.Writer) error { return plot.CLUE(w, &tab.Points, r, po) })
}

type simulateClueOptions struct {
	layers, points, clusterSize int
	seed                        uint64
	out                         string
}

func newSimulateClueCmd(stderr io.Writer) *cobra.Command {
	o := simulateClueOptions{layers: 100, points: 10000, clusterSize: 50, seed: 1}
	cmd := &cobra.Command{
		Use:   "clue -o FILE.csv",
		Short: "Simulate the CLUE paper's synthetic calorimeter",
		Long: `Simulate layers of unit-weight points on [-250, 250] cm: Gaussian clusters
of sigma 3 cm and 5 % uniform noise, seeded. The CSV has the columns
x,y,layer,weight.`,
		Example: `  hitflow simulate clue --layers 100 --points 10000 --seed 1 -o calo.csv
  hitflow clue --dc 3 --rhoc 8 --deltac 5 --deltao 5 --tile 5 -o out.csv calo.csv`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSimulateClue(cmd.Context(), o, stderr)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.layers, "layers", o.layers, "number of layers")
	f.IntVar(&o.points, "points", o.points, "points per layer")
	f.IntVar(&o.clusterSize, "cluster-size", o.clusterSize, "points per cluster")
	f.Uint64Var(&o.seed, "seed", o.seed, "random seed")
	f.StringVarP(&o.out, "output", "o", "", "output CSV")
	return cmd
}

func runSimulateClue(ctx context.Context, o simulateClueOptions, stderr io.Writer) error {
	if o.out == "" {
		return usagef("simulate clue needs -o FILE")
	}
	// The library takes 0 for its default; from a user it is a mistake.
	for _, n := range []struct {
		flag string
		v    int
	}{{"--layers", o.layers}, {"--points", o.points}, {"--cluster-size", o.clusterSize}} {
		if n.v < 1 {
			return usagef("%s %d: must be at least 1", n.flag, n.v)
		}
	}
	if err := prepare(ctx, nil, role("-o", o.out)); err != nil {
		return err
	}
	pts, err := cluesim.Generate(cluesim.Options{Layers: o.layers, PointsPerLayer: o.points, PointsPerCluster: o.clusterSize, Seed: o.seed}, nil)
	if err != nil {
		return usageError{err}
	}
	if ctx.Err() != nil {
		return stopped(ctx, "nothing written")
	}
	tab := &cluecsv.Table{Coords: []string{"x", "y"}, Layer: true, Points: *pts}
	if err := outfile.Write(o.out, func(w io.Writer) error { return cluecsv.WritePoints(w, tab) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d points (%d layers, seed %d) to %s\n", pts.Len(), o.layers, o.seed, o.out)
	return nil
}
