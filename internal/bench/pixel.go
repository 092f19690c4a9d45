package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/internal/cputime"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/pixelbench"
	"github.com/hitflow/hitflow/pixel/pixelcl"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
	"github.com/hitflow/hitflow/plot"
)

// Pixel are the settings of [RunPixel].
type Pixel struct {
	Datasets []pixelsim.Dataset
	Modes    []pixel.Mode // sequential, lanes or chunked
	Hits     int          // hits per dataset in memory
	Repeat   int          // repetitions of the set per run
	Runs     int          // runs per measurement (median)
	Rate     float64      // simulated hit rate, Mhit/s
	Plot     string       // also draw Mhit/s against workers here (.png or .svg), if set
	// The end-to-end runs: File, read with Reader and clustered with
	// Cluster, or if File is empty simulated gamma and pion45 runs of
	// E2EHits hits (none when 0).
	File    string
	Reader  tpx3.Options
	Cluster pixel.Config
	E2EHits int
	// Labeler, when set, adds mode chunked with its chunk step on a
	// device (pixel/pixelcl) on all workers, named Device.
	Labeler pixel.ChunkLabeler
	Device  string
}

// deviceMode names the rows of chunked on a device.
const deviceMode = "chunked, device"

// summer is a labeler that can leave the closed clusters' sums to the
// host (pixelcl.Labeler).
type summer interface {
	Sums() bool
	SetSums(on bool)
}

// timed is a labeler that says where its calls spent their time
// (pixelcl.Labeler).
type timed interface {
	TakeTimings() pixelcl.Timings
}

// deviceRows adds the clustering-only rows of chunked on the device:
// with a labeler that can sum or not, one row each way, and the labeler
// left as it was; with one that times its calls, a line each saying
// where they spent it, to print under the table.
func (o *Pixel) deviceRows(ctx context.Context, set *pixelbench.Set, cfg pixel.Config, workers int, stdout io.Writer) (notes []string, err error) {
	if o.Labeler == nil {
		return nil, nil
	}
	type variant struct {
		name string
		sums bool
	}
	variants := []variant{{deviceMode, false}}
	s, ok := o.Labeler.(summer)
	if ok {
		was := s.Sums()
		defer s.SetSums(was)
		variants = []variant{{deviceMode + ", sums on the device", true}, {deviceMode + ", sums on the host", false}}
	}
	for _, v := range variants {
		if ok {
			s.SetSums(v.sums)
		}
		tl, timing := o.Labeler.(timed)
		if timing {
			tl.TakeTimings()
		}
		r, err := pixelbench.Measure(ctx, set, cfg, pixel.Chunked, o.Labeler, workers, o.Repeat, o.Runs)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "| %s | %.2f | %s | %d | %.2f | - | %d |\n", set.Name, float64(set.Hits)/float64(r.Clusters/int64(o.Repeat)),
			v.name, workers, r.MhitPerS(), r.Clusters)
		if timing {
			notes = append(notes, timingNote(set.Name, strings.TrimPrefix(v.name, deviceMode+", "), tl.TakeTimings())...)
		}
	}
	return notes, nil
}

// timingNote is the line saying where a labeler's calls for a variant
// of the dataset spent their time, none when it had no buffer.
func timingNote(dataset, variant string, t pixelcl.Timings) []string {
	if t.Buffers == 0 {
		return nil
	}
	per := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(t.Buffers) }
	return []string{fmt.Sprintf("- %s, %s: %d buffers of %.2g M hits on average; a buffer's upload %.2f ms, chunk step %.2f ms, "+
		"sums %.2f ms, download %.2f ms; the labeler's whole call %.2f ms (%.0f Mhit/s if the rest took no time).",
		dataset, variant, t.Buffers, float64(t.Hits)/float64(t.Buffers)/1e6,
		per(t.Upload), per(t.Label), per(t.Sums), per(t.Download), per(t.Wall), float64(t.Hits)/t.Wall.Seconds()/1e6)}
}

// RunPixel follows the paper's method: the hits of a dataset are loaded
// into memory, then the clock runs while the set is repeated o.Repeat
// times with a ToA offset and clustered (local definition, dt 200 ns);
// o.Runs runs, median reported. Every mode runs on 1 .. GOMAXPROCS
// workers (sequential on one), with the parallel efficiency. Then the
// end-to-end rate: a file decoded, sorted, clustered and written as
// Parquet and as Arrow IPC, in every mode and auto, with how busy the
// cores were and the most memory its runs took; before each run the
// previous output is removed and the disks synced, so that no run pays for
// the write-back of the one before.
func RunPixel(ctx context.Context, o Pixel, stdout, stderr io.Writer) error {
	inputs := o.e2eInputs()
	cfg := pixel.DefaultConfig()
	maxWorkers := runtime.GOMAXPROCS(0)
	header(stdout)
	fmt.Fprintf(stdout, "Clustering only: %d hits x %d repetitions per run, median of %d runs, %.3g Mhit/s simulated, local definition, dt 200 ns.\n\n",
		o.Hits, o.Repeat, o.Runs, o.Rate)
	if o.Labeler != nil {
		where := ""
		if s, ok := o.Labeler.(summer); ok {
			where = map[bool]string{true: " (end to end, the closed clusters summed on the device, its default)",
				false: " (end to end, the closed clusters summed on the host, its default)"}[s.Sums()]
		}
		fmt.Fprintf(stdout, "Device (%s): %s; the rest of chunked on the workers, transfers included%s.\n\n", deviceMode, o.Device, where)
	}
	fmt.Fprintf(stdout, "| dataset | mean size | mode | workers | Mhit/s | efficiency | clusters per run |\n|---|---|---|---|---|---|---|\n")
	var series []plot.Series
	var notes []string
	for _, d := range o.Datasets {
		set, err := pixelbench.Load(d, o.Hits, o.Rate, 1)
		if err != nil {
			return err
		}
		for _, m := range o.Modes {
			s := plot.Series{Dataset: d.Name, Mode: m}
			var one float64
			for w := 1; w <= maxWorkers; w++ {
				if m == pixel.Sequential && w > 1 {
					break
				}
				r, err := pixelbench.Measure(ctx, set, cfg, m, nil, w, o.Repeat, o.Runs)
				if err != nil {
					return err
				}
				rate := r.MhitPerS()
				if w == 1 {
					one = rate
				}
				fmt.Fprintf(stdout, "| %s | %.2f | %s | %d | %.2f | %.0f %% | %d |\n", d.Name, float64(set.Hits)/float64(r.Clusters/int64(o.Repeat)),
					m, w, rate, 100*rate/(float64(w)*one), r.Clusters)
				s.Workers, s.Rate = append(s.Workers, w), append(s.Rate, rate)
			}
			series = append(series, s)
		}
		n, err := o.deviceRows(ctx, set, cfg, maxWorkers, stdout)
		if err != nil {
			return err
		}
		notes = append(notes, n...)
	}
	if len(notes) > 0 {
		fmt.Fprintf(stdout, "\nWhere the device's calls spent their time (the upload and download as the host waited for them, the kernels' time on the device):\n\n%s\n", strings.Join(notes, "\n"))
	}
	if o.Plot != "" {
		if err := writeScalingPlot(o.Plot, series); err != nil {
			return err
		}
	}
	if len(inputs) == 0 {
		return nil
	}
	return benchEndToEnd(ctx, o, inputs, o.Modes, maxWorkers, stdout, stderr)
}

// e2eInputs returns the inputs of the end-to-end runs: o.File, or the
// simulated single-chip runs unless o.E2EHits is 0.
func (o Pixel) e2eInputs() []e2eInput {
	if o.File != "" {
		return []e2eInput{{name: o.File, reader: o.Reader, cluster: o.Cluster}}
	}
	if o.E2EHits == 0 {
		return nil
	}
	single, _ := tpx3.LayoutByName("single")
	var inputs []e2eInput
	for _, name := range e2eDatasets {
		inputs = append(inputs, e2eInput{dataset: name, reader: tpx3.Options{Format: tpx3.TPX3, Layout: single}, cluster: pixel.DefaultConfig()})
	}
	return inputs
}

func writeScalingPlot(name string, series []plot.Series) error {
	format, err := plot.FormatOf(name)
	if err != nil {
		return err
	}
	return outfile.Write(name, func(w io.Writer) error {
		return plot.Scaling(w, "hitflow clustering, "+time.Now().Format("2006-01-02"), series, format)
	})
}

// e2eDatasets are simulated for the end-to-end rate without --file: a
// sparse source and tracks, for which different modes are fastest.
var e2eDatasets = []string{"gamma", "pion45"}

// e2eInput is a file of the end-to-end runs, with how it is read and
// clustered; a simulated one has no name until it is written.
type e2eInput struct {
	dataset, name string
	reader        tpx3.Options
	cluster       pixel.Config
}

// benchEndToEnd times file -> clusters file (Parquet, then Arrow IPC) for
// every mode on all workers, and for auto.
func benchEndToEnd(ctx context.Context, o Pixel, inputs []e2eInput, modes []pixel.Mode, workers int, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "hitflow-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for i, in := range inputs {
		if in.dataset == "" {
			continue
		}
		inputs[i].name = filepath.Join(dir, in.dataset+".tpx3")
		fmt.Fprintf(stderr, "hitflow: simulating %d %s hits into %s\n", o.E2EHits, in.dataset, inputs[i].name)
		if err := simulateToFile(ctx, inputs[i].name, in.dataset, o.E2EHits, o.Rate); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\nEnd to end: a file decoded, sorted (500 us window), clustered and written as Parquet or Arrow IPC to %s, timed from opening the input to closing the output (each run after the previous output was removed and the disks synced); median of %d runs; the process's CPU time over the runs' wall time (%d %% when all %d cores were busy throughout); the most memory a run took (held by the Go runtime, sampled every 5 ms); hits outside the sensor are read but not clustered.\n\n",
		dir, o.Runs, 100*runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0))
	fmt.Fprintf(stdout, "| input | output | mode | workers | hits | out of range | clusters | Mhit/s | CPU %% | memory MB |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, in := range inputs {
		fi, err := os.Stat(in.name)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("%s (%.0f MB)", filepath.Base(in.name), float64(fi.Size())/1e6)
		var outOfRange int64
		kinds := []e2eKind{}
		for _, m := range append(slices.Clone(modes), pixel.Auto) {
			kinds = append(kinds, e2eKind{mode: m, name: m.String()})
		}
		if o.Labeler != nil {
			kinds = append(kinds, e2eKind{pixel.Chunked, o.Labeler, deviceMode})
		}
		for _, ext := range []string{".parquet", ".arrow"} {
			for _, k := range kinds {
				w := workers
				if k.mode == pixel.Sequential {
					w = 1
				}
				var times []time.Duration
				var sum pipeline.Summary
				var most uint64
				var wall, cpu time.Duration
				out := filepath.Join(dir, "clusters"+ext)
				for range o.Runs {
					if err := pixelbench.SettleDisk(out); err != nil {
						return err
					}
					watch := pixelbench.WatchMemory(5 * time.Millisecond)
					cpu0 := cputime.Process()
					var took time.Duration
					sum, took, err = endToEnd(ctx, in, out, k, w)
					cpu += cputime.Process() - cpu0
					most = max(most, watch.Stop())
					if err != nil {
						return err
					}
					times = append(times, took)
					wall += took
				}
				med := median(times)
				busy := "?" // the CPU time is not known here
				if cputime.Process() >= 0 {
					busy = fmt.Sprintf("%.0f", 100*cpu.Seconds()/wall.Seconds())
				}
				fmt.Fprintf(stdout, "| %s | %s | %s | %d | %d | %d | %d | %.2f | %s | %.0f |\n", label, ext, k.name, w, sum.Hits, sum.OutOfRange, sum.Clusters,
					float64(sum.Hits)/med.Seconds()/1e6, busy, float64(most)/1e6)
				outOfRange = sum.OutOfRange
			}
		}
		if outOfRange > 0 {
			fmt.Fprintf(stderr, "hitflow: %s: %d hits outside the %dx%d sensor were not clustered: give .tpx3 files the --layout of their chips, text inputs their --sensor size\n",
				in.name, outOfRange, in.cluster.Width, in.cluster.Height)
		}
	}
	return nil
}

// e2eKind is how an end-to-end run clusters: a mode, with a device's
// chunk step or not.
type e2eKind struct {
	mode    pixel.Mode
	labeler pixel.ChunkLabeler
	name    string
}

// endToEnd runs the pipeline from in to out and returns how long it took
// from opening the input to closing the output: the writer's last batch
// and the file's closing are part of a user's wait.
func endToEnd(ctx context.Context, in e2eInput, out string, k e2eKind, workers int) (pipeline.Summary, time.Duration, error) {
	start := time.Now()
	f, err := os.Open(in.name)
	if err != nil {
		return pipeline.Summary{}, 0, err
	}
	defer f.Close()
	cw, err := format.CreateClusters(out, nil)
	if err != nil {
		return pipeline.Summary{}, 0, err
	}
	sum, err := pipeline.Run(ctx, pipeline.Job{
		Sources:  []pipeline.Source{{Name: in.name, R: f}},
		Reader:   in.reader,
		Unsorted: 500 * pixel.Microsecond,
		Cluster:  in.cluster,
		Mode:     k.mode,
		Labeler:  k.labeler,
		Workers:  workers,
		Clusters: cw,
	})
	if cerr := cw.Close(); err == nil {
		err = cerr
	}
	return sum, time.Since(start), err
}

func simulateToFile(ctx context.Context, name, dataset string, hits int, rate float64) error {
	d, err := pixelsim.DatasetByName(dataset)
	if err != nil {
		return err
	}
	return outfile.Write(name, func(f io.Writer) error {
		w, err := tpx3.NewHitWriter(f, tpx3.TPX3)
		if err != nil {
			return err
		}
		write := func(h *pixel.Hits) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return w.Write(h)
		}
		if err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: hits, Seed: 1, RateMHz: rate, Disorder: 50 * pixel.Microsecond}, write); err != nil {
			return err
		}
		return w.Close()
	})
}
