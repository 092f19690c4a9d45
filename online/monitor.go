package online

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hitflow/hitflow/pixel/pipeline"
)

// Monitor follows a live run: the pipeline's counters (give it
// &m.Counters and m.Written), the stream's buffer, and the latency of the
// clusters written. Its methods are safe for concurrent use.
type Monitor struct {
	Counters pipeline.Counters
	stream   *Stream // nil for a run of files

	mu      sync.Mutex
	latency Latency
	hist    prometheus.Histogram
	prev    sample // at the last status line
}

// sample is what the status line's rates are taken between.
type sample struct {
	t              time.Time
	hits, clusters int64
}

// NewMonitor follows a run of the stream s (nil for files).
func NewMonitor(s *Stream) *Monitor {
	return &Monitor{stream: s, prev: sample{t: time.Now()},
		hist: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "hitflow_cluster_latency_seconds",
			Help:    "Time from the arrival of the input that closed a batch of clusters to the batch written out, per batch.",
			Buckets: prometheus.ExponentialBuckets(1e-4, 2, 18),
		})}
}

// Written records a batch of clusters written out (see pipeline.Job).
func (m *Monitor) Written(clusters int, arrived time.Time) {
	if arrived.IsZero() {
		return
	}
	d := time.Since(arrived)
	m.hist.Observe(d.Seconds())
	m.mu.Lock()
	m.latency.Add(d, clusters)
	m.mu.Unlock()
}

// Latency returns the distribution of the latencies so far.
func (m *Monitor) Latency() Latency {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.latency
}

// Status is the line of the run's state: the rates since the last call,
// the buffer and how far behind the source the run is.
func (m *Monitor) Status() string {
	now := sample{time.Now(), m.Counters.Hits.Load(), m.Counters.Clusters.Load()}
	m.mu.Lock()
	prev := m.prev
	m.prev = now
	m.mu.Unlock()
	dt := now.t.Sub(prev.t).Seconds()
	line := fmt.Sprintf("%.1f Mhit/s in, %.0f kcluster/s out", float64(now.hits-prev.hits)/dt/1e6, float64(now.clusters-prev.clusters)/dt/1e3)
	if m.stream != nil {
		st := m.stream.Stats()
		line += fmt.Sprintf(", buffered %s, spooled %s, lag %s", Bytes(st.Buffered), Bytes(st.Spooled), round(m.stream.Lag()))
		if st.Reconnects > 0 {
			line += fmt.Sprintf(", reconnects %d", st.Reconnects)
		}
	}
	return line + fmt.Sprintf(", late hits %d", m.Counters.Late.Load())
}

// ShowStatus writes the status line to w, a terminal, every second until
// the returned function is called, which clears it.
func (m *Monitor) ShowStatus(w io.Writer) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				fmt.Fprint(w, "\r"+m.Status()+"\x1b[K")
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// ServeMetrics serves the run's metrics for Prometheus at
// http://addr/metrics until stop is called. It fails at once when addr
// cannot be listened on.
func (m *Monitor) ServeMetrics(addr string) (stop func(), err error) {
	return ServeMetrics(addr, m.collectors()...)
}

// ServeMetrics serves the collectors' metrics for Prometheus at
// http://addr/metrics until stop is called. It fails at once when addr
// cannot be listened on.
func ServeMetrics(addr string, cs ...prometheus.Collector) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(l) // ends with http.ErrServerClosed at Shutdown
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}, nil
}

// collectors are the run's metrics, read when scraped.
func (m *Monitor) collectors() []prometheus.Collector {
	counter := func(name, help string, v func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, v)
	}
	gauge := func(name, help string, v func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, v)
	}
	load := func(c interface{ Load() int64 }) func() float64 { return func() float64 { return float64(c.Load()) } }
	cs := []prometheus.Collector{m.hist,
		counter("hitflow_bytes_read_total", "Input bytes decoded.", load(&m.Counters.Bytes)),
		counter("hitflow_hits_total", "Pixel hits decoded, those out of range included.", load(&m.Counters.Hits)),
		counter("hitflow_clusters_total", "Clusters written.", load(&m.Counters.Clusters)),
		counter("hitflow_late_hits_total", "Hits later than the reorder window allowed.", load(&m.Counters.Late)),
		counter("hitflow_out_of_range_hits_total", "Hits outside the layout or sensor, not clustered.", load(&m.Counters.OutOfRange)),
		counter("hitflow_invalid_energy_hits_total", "Hits without a valid energy (calibrated runs).", load(&m.Counters.Invalid)),
	}
	if s := m.stream; s != nil {
		stat := func(f func(Stats) float64) func() float64 { return func() float64 { return f(s.Stats()) } }
		cs = append(cs,
			counter("hitflow_bytes_received_total", "Bytes received from the source.", stat(func(st Stats) float64 { return float64(st.Received) })),
			gauge("hitflow_bytes_buffered", "Bytes received, in memory, not yet decoded.", stat(func(st Stats) float64 { return float64(st.Buffered) })),
			gauge("hitflow_bytes_spooled", "Bytes received, in spool files, not yet decoded.", stat(func(st Stats) float64 { return float64(st.Spooled) })),
			counter("hitflow_spooled_bytes_total", "Bytes that went to the spool.", stat(func(st Stats) float64 { return float64(st.SpooledAll) })),
			counter("hitflow_backpressure_seconds_total", "Time the receiver waited for room.", stat(func(st Stats) float64 { return st.Waited.Seconds() })),
			counter("hitflow_reconnects_total", "Connections made again after a loss.", stat(func(st Stats) float64 { return float64(st.Reconnects) })),
			counter("hitflow_cut_bytes_total", "Bytes of chunks left incomplete by a lost connection, dropped.", stat(func(st Stats) float64 { return float64(st.Cut) })),
			counter("hitflow_skipped_bytes_total", "Bytes before a connection's first chunk header (joined mid-stream), skipped.", stat(func(st Stats) float64 { return float64(st.Skipped) })),
			gauge("hitflow_lag_seconds", "Age of the oldest byte received and not yet decoded.", func() float64 { return s.Lag().Seconds() }),
		)
	}
	return cs
}

// Latency is a distribution of latencies in buckets 2^(1/8) wide (9 %)
// from 1 µs up, with the exact maximum.
type Latency struct {
	counts [latencyBuckets]int64
	N      int64 // clusters
	Max    time.Duration
}

const latencyBuckets = 256 // up to 2^32 µs, 71 minutes

// bucket is the index of the bucket whose upper edge is the first at or
// above d.
func bucket(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us <= 1 {
		return 0
	}
	return min(int(math.Ceil(8*math.Log2(us))), latencyBuckets-1)
}

// Add counts n clusters of latency d.
func (l *Latency) Add(d time.Duration, n int) {
	if n <= 0 {
		return
	}
	l.counts[bucket(d)] += int64(n)
	l.N += int64(n)
	l.Max = max(l.Max, d)
}

// Quantile is the latency that a share q of the clusters did not exceed,
// to the bucket's upper edge (9 %), and never above the maximum.
func (l *Latency) Quantile(q float64) time.Duration {
	if l.N == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(l.N)))
	var seen int64
	for i, c := range l.counts {
		if seen += c; seen >= max(rank, 1) {
			if i == latencyBuckets-1 { // it holds all beyond
				return l.Max
			}
			edge := time.Duration(math.Exp2(float64(i)/8) * float64(time.Microsecond))
			return min(edge, l.Max)
		}
	}
	return l.Max
}

// String is "p50 3.1ms, p99 8.2ms, max 12ms".
func (l Latency) String() string {
	return fmt.Sprintf("p50 %v, p99 %v, max %v", round(l.Quantile(0.5)), round(l.Quantile(0.99)), round(l.Max))
}

// round keeps three significant digits of a duration.
func round(d time.Duration) time.Duration {
	for unit := time.Duration(1); unit < time.Hour; unit *= 10 {
		if d < 1000*unit {
			return d.Round(unit)
		}
	}
	return d.Round(time.Second)
}

// Bytes formats a number of bytes in binary units: "12.0 MiB".
type Bytes int64

func (b Bytes) String() string {
	const units = "KMGTPE"
	if b < 1024 {
		return fmt.Sprintf("%d B", int64(b))
	}
	v, i := float64(b)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}
