package main

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

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/output"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/pixelbench"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

type pixelBenchOptions struct {
	datasets, modes, plot, file string
	hits, repeat, runs, e2eHits int
	rate                        float64
}

func newBenchPixelCmd(stdout, stderr io.Writer) *cobra.Command {
	var names []string
	for _, d := range pixelsim.Datasets {
		names = append(names, d.Name)
	}
	o := pixelBenchOptions{datasets: strings.Join(names, ","), modes: "sequential,lanes,chunked",
		hits: 4000000, repeat: 25, runs: 5, rate: 10, e2eHits: 20000000}
	cmd := &cobra.Command{
		Use:   "pixel",
		Short: "The clustering benchmark of Čelko et al. on the simulated datasets",
		Long: `Follow the paper's method: the hits of a dataset are loaded into memory,
then the clock runs while the set is repeated --repeat times with a ToA
offset and clustered (local definition, dt 200 ns); --runs runs, median
reported. Every mode runs on 1 .. GOMAXPROCS workers (sequential on one),
with the parallel efficiency (rate / (workers x rate on one worker)).
Then the end-to-end rate: a .tpx3 file on local disk (--file, or one
simulated gamma and pion45 runs in the temporary directory) decoded,
sorted, clustered and written as Parquet and as Arrow IPC, in every mode
and auto, with the most memory its runs took; before each run the
previous output is removed and the disks synced, so that no run pays for
the write-back of the one before. Prints Markdown tables;
--plot draws Mhit/s against workers.`,
		Example: `  hitflow bench pixel --plot scaling.png
  hitflow bench pixel --datasets gamma,pion45 --hits 1000000 --repeat 5 --runs 3`,
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
	f.StringVar(&o.file, "file", "", ".tpx3 file for the end-to-end rate (default: simulate gamma and pion45 runs)")
	f.IntVar(&o.e2eHits, "e2e-hits", o.e2eHits, "hits of the simulated end-to-end file (0: skip)")
	return cmd
}

func runBenchPixel(ctx context.Context, o pixelBenchOptions, stdout, stderr io.Writer) error {
	if o.hits < 1 || o.repeat < 1 || o.runs < 1 || o.e2eHits < 0 || !(o.rate > 0) {
		return usagef("--hits, --repeat, --runs and --rate must be positive")
	}
	var datasets []pixelsim.Dataset
	for _, name := range strings.Split(o.datasets, ",") {
		d, err := pixelsim.DatasetByName(strings.TrimSpace(name))
		if err != nil {
			return usageError{err}
		}
		datasets = append(datasets, d)
	}
	var modes []pixel.Mode
	for _, name := range strings.Split(o.modes, ",") {
		m, err := pixel.ParseMode(strings.TrimSpace(name))
		if err != nil || m == pixel.Auto {
			return usagef("--modes: %q is not sequential, lanes or chunked", name)
		}
		modes = append(modes, m)
	}
	cfg := pixel.DefaultConfig()
	maxWorkers := runtime.GOMAXPROCS(0)
	benchHeader(stdout)
	fmt.Fprintf(stdout, "Clustering only: %d hits x %d repetitions per run, median of %d runs, %.3g Mhit/s simulated, local definition, dt 200 ns.\n\n",
		o.hits, o.repeat, o.runs, o.rate)
	fmt.Fprintf(stdout, "| dataset | mean size | mode | workers | Mhit/s | efficiency | clusters per run |\n|---|---|---|---|---|---|---|\n")
	var series []output.Series
	for k, d := range datasets {
		set, err := pixelbench.Load(d, o.hits, o.rate, 1)
		if err != nil {
			return err
		}
		for _, m := range modes {
			s := output.Series{Label: d.Name + " " + m.String(), Color: k, Dashed: m == pixel.Chunked}
			var one float64
			for w := 1; w <= maxWorkers; w++ {
				if m == pixel.Sequential && w > 1 {
					break
				}
				r, err := pixelbench.Measure(ctx, set, cfg, m, w, o.repeat, o.runs)
				if err != nil {
					return err
				}
				rate := r.MhitPerS()
				if w == 1 {
					one = rate
				}
				fmt.Fprintf(stdout, "| %s | %.2f | %s | %d | %.2f | %.0f %% | %d |\n", d.Name, float64(set.Hits)/float64(r.Clusters/int64(o.repeat)),
					m, w, rate, 100*rate/(float64(w)*one), r.Clusters)
				s.Workers, s.Rate = append(s.Workers, w), append(s.Rate, rate)
			}
			if m != pixel.Sequential {
				series = append(series, s)
			}
		}
	}
	if o.plot != "" {
		if err := writeScalingPlot(o.plot, series); err != nil {
			return err
		}
	}
	if o.file == "" && o.e2eHits == 0 {
		return nil
	}
	return benchEndToEnd(ctx, o, modes, maxWorkers, stdout, stderr)
}

func writeScalingPlot(name string, series []output.Series) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	format := strings.TrimPrefix(filepath.Ext(name), ".")
	if err := output.WriteScalingPlot(f, "hitflow clustering, "+time.Now().Format("2006-01-02"), series, format); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// e2eDatasets are simulated for the end-to-end rate without --file: a
// sparse source and tracks, for which different modes are fastest.
var e2eDatasets = []string{"gamma", "pion45"}

// benchEndToEnd times .tpx3 file -> clusters file (Parquet, then Arrow IPC)
// for every mode on all workers, and for auto.
func benchEndToEnd(ctx context.Context, o pixelBenchOptions, modes []pixel.Mode, workers int, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "hitflow-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := []string{o.file}
	if o.file == "" {
		files = files[:0]
		for _, name := range e2eDatasets {
			file := filepath.Join(dir, name+".tpx3")
			fmt.Fprintf(stderr, "hitflow: simulating %d %s hits into %s\n", o.e2eHits, name, file)
			if err := simulateToFile(file, name, o.e2eHits, o.rate); err != nil {
				return err
			}
			files = append(files, file)
		}
	}
	fmt.Fprintf(stdout, "\nEnd to end: a .tpx3 file decoded, sorted (500 us window), clustered and written as Parquet or Arrow IPC to %s (each run after the previous output was removed and the disks synced); median of %d runs; the most memory a run took (held by the Go runtime, sampled every 5 ms).\n\n",
		dir, o.runs)
	fmt.Fprintf(stdout, "| input | output | mode | workers | hits | clusters | Mhit/s | memory MB |\n|---|---|---|---|---|---|---|---|\n")
	for _, file := range files {
		fi, err := os.Stat(file)
		if err != nil {
			return err
		}
		input := fmt.Sprintf("%s (%.0f MB)", filepath.Base(file), float64(fi.Size())/1e6)
		for _, ext := range []string{".parquet", ".arrow"} {
			for _, m := range append(slices.Clone(modes), pixel.Auto) {
				w := workers
				if m == pixel.Sequential {
					w = 1
				}
				var times []time.Duration
				var sum pipeline.Summary
				var most uint64
				out := filepath.Join(dir, "clusters"+ext)
				for range o.runs {
					if err := pixelbench.SettleDisk(out); err != nil {
						return err
					}
					watch := pixelbench.WatchMemory(5 * time.Millisecond)
					sum, err = endToEnd(ctx, file, out, m, w)
					most = max(most, watch.Stop())
					if err != nil {
						return err
					}
					times = append(times, sum.Elapsed)
				}
				med := median(times)
				fmt.Fprintf(stdout, "| %s | %s | %s | %d | %d | %d | %.2f | %.0f |\n", input, ext, m, w, sum.Hits, sum.Clusters,
					float64(sum.Hits)/med.Seconds()/1e6, float64(most)/1e6)
			}
		}
	}
	return nil
}

func endToEnd(ctx context.Context, in, out string, mode pixel.Mode, workers int) (pipeline.Summary, error) {
	f, err := os.Open(in)
	if err != nil {
		return pipeline.Summary{}, err
	}
	defer f.Close()
	cw, err := output.CreateClusters(out, nil)
	if err != nil {
		return pipeline.Summary{}, err
	}
	layout, _ := tpx3.LayoutByName("single")
	sum, err := pipeline.Run(ctx, pipeline.Job{
		Sources:  []pipeline.Source{{Name: in, R: f}},
		Reader:   tpx3.Options{Format: tpx3.TPX3, Layout: layout},
		Unsorted: 500 * pixel.Microsecond,
		Cluster:  pixel.DefaultConfig(),
		Mode:     mode,
		Workers:  workers,
		Clusters: cw,
	})
	if cerr := cw.Close(); err == nil {
		err = cerr
	}
	return sum, err
}

func simulateToFile(name, dataset string, hits int, rate float64) error {
	d, err := pixelsim.DatasetByName(dataset)
	if err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w, err := tpx3.NewHitWriter(f, tpx3.TPX3)
	if err == nil {
		err = pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: hits, Seed: 1, RateMHz: rate, Disorder: 50 * pixel.Microsecond}, w.Write)
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
