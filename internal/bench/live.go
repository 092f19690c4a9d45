package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/internal/cputime"
	"github.com/hitflow/hitflow/online"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// Live are the settings of [RunLive].
type Live struct {
	Datasets []pixelsim.Dataset
	Rates    []float64 // served rates, Mhit/s; 0 serves as fast as the client reads
	Seconds  float64   // of the run's time per measurement at a served rate
	MaxHits  int       // hits of a measurement served as fast as read
	Out      string    // the clusters file (its format by its extension); "": Arrow IPC, discarded
	Memory   int64     // of the stream's buffer
	Spool    string    // directory for the stream's spool; "" makes the source wait
}

// liveRunHits is the most hits simulated for a measurement; longer runs
// serve them again, later in time.
const liveRunHits = 20_000_000

// RunLive serves simulated runs over loopback TCP, paced at each rate
// (see [online.Serve]), and clusters them live into o.Out as `hitflow
// cluster tcp://...` does: the rate kept up, how far the server fell
// behind its pace, what the buffer did (spooled, or the source waited),
// the latency of the clusters, and how busy the cores were (server and
// client share the process and the machine). Prints a Markdown table.
func RunLive(ctx context.Context, o Live, stdout io.Writer) error {
	header(stdout)
	out := o.Out
	if out == "" {
		out = "Arrow IPC, formatted and discarded (the disk's bandwidth aside)"
	}
	fmt.Fprintf(stdout, "Live over loopback TCP to %s: served by `hitflow simulate pixel --serve` in the same process; buffer %s, %s; latency from the arrival of the input that closed a batch of clusters to the batch written (flushed every 50 ms).\n\n",
		out, online.Bytes(o.Memory), map[bool]string{true: "spool " + o.Spool, false: "no spool"}[o.Spool != ""])
	fmt.Fprintf(stdout, "| dataset | served Mhit/s | hits | clustered Mhit/s | server behind | lost | spooled | source waited | latency p50 | p99 | max | CPU %% of %d cores |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n", runtime.GOMAXPROCS(0))
	for _, d := range o.Datasets {
		for _, rate := range o.Rates {
			r, err := liveRun(ctx, o, d, rate)
			if err != nil {
				return fmt.Errorf("%s at %v Mhit/s: %w", d.Name, rate, err)
			}
			served := "as read"
			if rate > 0 {
				served = fmt.Sprintf("%.0f", rate)
			}
			fmt.Fprintf(stdout, "| %s | %s | %d | %.1f | %v | %d | %s | %v | %v | %v | %v | %.0f |\n",
				d.Name, served, r.hits, r.rate, r.behind.Round(time.Millisecond), r.lost, online.Bytes(r.stream.SpooledAll),
				r.stream.Waited.Round(time.Millisecond), r.latency.Quantile(0.5).Round(time.Millisecond),
				r.latency.Quantile(0.99).Round(time.Millisecond), r.latency.Max.Round(time.Millisecond), r.cpu)
		}
	}
	return nil
}

// liveResult is one measurement.
type liveResult struct {
	hits    int64
	rate    float64 // clustered, from the first byte to the output closed
	behind  time.Duration
	lost    int64 // served, not clustered
	stream  online.Stats
	latency online.Latency
	cpu     float64 // % of all cores
}

func liveRun(ctx context.Context, o Live, d pixelsim.Dataset, rate float64) (liveResult, error) {
	var r liveResult
	total := o.MaxHits
	sim := pixelsim.Options{Dataset: d, Seed: 1, RateMHz: 40, Disorder: 50 * pixel.Microsecond}
	opt := online.ServeOptions{}
	if rate > 0 {
		total = int(rate * 1e6 * o.Seconds)
		sim.RateMHz, opt.Speed = rate, 1
	}
	// Served at least twice, so that it is simulated in memory first and
	// the simulation does not set the pace.
	opt.Repeat = max(2, int(math.Ceil(float64(total)/liveRunHits)))
	sim.Hits = total / opt.Repeat
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan online.ServeStats, 1)
	go func() {
		st, _ := online.Serve(ctx, l, sim, opt)
		served <- st
	}()
	s, err := online.Dial(ctx, l.Addr().String(), online.Options{Memory: o.Memory, Spool: o.Spool})
	if err != nil {
		return r, err
	}
	defer s.Close()
	var cw format.ClusterWriter
	if o.Out == "" {
		cw, err = columnar.NewClusterArrow(io.Discard, columnar.Options{})
	} else {
		os.Remove(o.Out)
		cw, err = format.CreateClusters(o.Out, nil)
	}
	if err != nil {
		return r, err
	}
	layout, _ := tpx3.LayoutByName("single")
	mon := online.NewMonitor(s)
	var first atomic.Int64 // when the first batch was read, ns since start
	start := time.Now()
	var cpu0 time.Duration
	job := pipeline.Job{
		Sources:  []pipeline.Source{{Name: s.Name(), R: s, Arrived: s.ArrivedAt}},
		Reader:   tpx3.Options{Format: tpx3.TPX3, Layout: layout},
		Unsorted: 500 * pixel.Microsecond,
		Cluster:  pixel.DefaultConfig(),
		Mode:     pixel.Auto,
		Clusters: cw,
		Flush:    50 * time.Millisecond,
		Written:  mon.Written,
		Counters: &mon.Counters,
		Progress: func(int64) {
			if first.Load() == 0 {
				first.Store(int64(time.Since(start)))
				cpu0 = cputime.Process()
			}
		},
	}
	sum, err := pipeline.Run(ctx, job)
	if cerr := cw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return r, err
	}
	elapsed := time.Since(start) - time.Duration(first.Load())
	cpu := cputime.Process() - cpu0
	st := <-served
	r = liveResult{hits: sum.Hits, rate: float64(sum.Hits) / elapsed.Seconds() / 1e6, behind: st.Late,
		lost: st.Hits - sum.Hits, stream: s.Stats(), latency: mon.Latency(),
		cpu: 100 * cpu.Seconds() / elapsed.Seconds() / float64(runtime.GOMAXPROCS(0))}
	return r, nil
}
