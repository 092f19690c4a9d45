package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/hitflow/hitflow/online"
	"github.com/hitflow/hitflow/online/kafka"
	"github.com/hitflow/hitflow/pixel/pipeline"
)

// liveOptions are the flags of a run on live data.
type liveOptions struct {
	follow    bool
	idle      time.Duration
	idleSet   bool // --idle given: it ends a kafka:// input too
	partition int
	fromEnd   bool
	offset    int64
	buffer    string
	spool     string
	reconnect bool
	latency   time.Duration
	rotate    string
	metrics   string
}

var defaultLive = liveOptions{idle: 5 * time.Second, buffer: "1GiB", latency: 100 * time.Millisecond}

func (l *liveOptions) add(f *pflag.FlagSet) {
	f.BoolVar(&l.follow, "follow", false, "keep reading the file while it grows (a run being written), until it has not grown for --idle")
	f.DurationVar(&l.idle, "idle", l.idle, "with --follow: end when the file has not grown for this long; given, a kafka:// input also ends after this long without a message")
	f.IntVar(&l.partition, "partition", -1, "kafka:// input: the partition (detector) to read; -1 for a topic's only one")
	f.BoolVar(&l.fromEnd, "from-end", false, "kafka:// input: read the messages published from now on, not from the oldest kept")
	f.Int64Var(&l.offset, "offset", 0, "kafka:// input: start at this offset (the next offset a stopped run reported)")
	f.StringVar(&l.buffer, "buffer", l.buffer, "live input held in memory when the clustering falls behind (512MiB, 2GiB, ...); memory taken is kept for the next backlog")
	f.StringVar(&l.spool, "spool", "", "directory for live input beyond --buffer (without it, the source waits)")
	f.BoolVar(&l.reconnect, "reconnect", false, "tcp:// input: connect again, with back-off, when the connection is lost")
	f.DurationVar(&l.latency, "latency", l.latency, "live input: clusters reach .csv, .clog and -.arrow outputs within about this")
	f.StringVar(&l.rotate, "rotate", "", "close the outputs and begin numbered new ones (name-0001.ext, ...) every age (10m) or size of the clusters file (1GiB)")
	f.StringVar(&l.metrics, "metrics", "", "serve Prometheus metrics at http://ADDRESS/metrics (:9464) during the run")
}

// liveInput is where a run's live data come from: tcp://HOST:PORT, - for
// standard input, or a file with --follow; "" when the inputs are files.
func (l *liveOptions) input(files []string) (string, error) {
	live := ""
	for _, f := range files {
		if strings.HasPrefix(f, "tcp://") || f == "-" || kafka.IsTarget(f) {
			live = f
		}
	}
	switch {
	case l.follow && len(files) != 1:
		return "", usagef("--follow reads one growing file; got %d inputs", len(files))
	case l.follow && live != "":
		return "", usagef("--follow reads a file, not %s", live)
	case live != "" && len(files) > 1:
		return "", usagef("a live input (%s) is the run's only input", live)
	case l.reconnect && !strings.HasPrefix(live, "tcp://"):
		return "", usagef("--reconnect is for a tcp:// input")
	case (l.partition != -1 || l.fromEnd || l.offset != 0) && !kafka.IsTarget(live):
		return "", usagef("--partition, --from-end and --offset are for a kafka:// input")
	case l.offset < 0 || l.offset > 0 && l.fromEnd:
		return "", usagef("--offset must be a non-negative offset, without --from-end")
	case l.follow:
		return files[0], nil
	}
	if live == "" && (l.spool != "" || l.buffer != defaultLive.buffer) {
		return "", usagef("--buffer and --spool are for live inputs (tcp://, -, --follow)")
	}
	return live, nil
}

// open starts receiving the live input; stdin is the command's standard
// input. The Kafka reader of a kafka:// input is returned too, to be
// closed after the stream.
func (l *liveOptions) open(ctx context.Context, input string, stdin io.Reader) (*online.Stream, *kafka.Reader, error) {
	memory, err := online.ParseSize(l.buffer)
	if err != nil || memory <= 0 {
		return nil, nil, usagef("--buffer %q: want a size such as 1GiB", l.buffer)
	}
	opt := online.Options{Memory: memory, Spool: l.spool, Reconnect: l.reconnect}
	if l.spool != "" {
		if fi, err := os.Stat(l.spool); err != nil || !fi.IsDir() {
			return nil, nil, usagef("--spool %s: not a directory", l.spool)
		}
	}
	switch {
	case l.follow:
		if l.idle <= 0 {
			return nil, nil, usagef("--idle must be positive")
		}
		s, err := online.Follow(ctx, input, l.idle, opt)
		return s, nil, err
	case input == "-":
		return online.Receive(ctx, "standard input", stdin, opt), nil, nil
	case kafka.IsTarget(input):
		t, err := kafka.ParseTarget(input)
		if err != nil {
			return nil, nil, usageError{err}
		}
		ro := kafka.ReadOptions{Target: t, Partition: int32(l.partition), FromEnd: l.fromEnd, Offset: l.offset}
		if l.idleSet {
			ro.Idle = l.idle
		}
		r, err := kafka.NewReader(ctx, ro)
		if err != nil {
			return nil, nil, err
		}
		return online.Receive(ctx, r.Name(), r, opt), r, nil
	}
	s, err := online.Dial(ctx, strings.TrimPrefix(input, "tcp://"), opt)
	return s, nil, err
}

// liveRun is a live stream being clustered, with its monitor.
type liveRun struct {
	stream *online.Stream
	kafka  *kafka.Reader // of a kafka:// input
	mon    *online.Monitor
	stop   []func()
}

// startLive makes the stream the job's source, with its arrival times,
// and flushes the outputs within the latency.
func startLive(job *pipeline.Job, s *online.Stream, o liveOptions) (*liveRun, error) {
	if o.latency <= 0 {
		return nil, usagef("--latency must be positive")
	}
	job.Sources = []pipeline.Source{{Name: s.Name(), R: s, Arrived: s.ArrivedAt}}
	// Half of the latency for the flushing, half for the clustering.
	job.Flush = o.latency / 2
	return &liveRun{stream: s, mon: online.NewMonitor(s)}, nil
}

// monitor gives the job the monitor's counters, and starts the metrics
// server and, for a live run on a terminal, the status line.
func (r *liveRun) monitor(job *pipeline.Job, o liveOptions, stderr io.Writer, quiet bool) error {
	job.Counters, job.Written = &r.mon.Counters, r.mon.Written
	if o.metrics != "" {
		stop, err := r.mon.ServeMetrics(o.metrics)
		if err != nil {
			return usageError{err}
		}
		r.stop = append(r.stop, stop)
	}
	if f, ok := stderr.(*os.File); ok && !quiet && r.stream != nil && term.IsTerminal(int(f.Fd())) {
		r.stop = append(r.stop, r.mon.ShowStatus(stderr))
	}
	return nil
}

// done stops the status line and the metrics server.
func (r *liveRun) done() {
	for _, stop := range r.stop {
		stop()
	}
	r.stop = nil
}

// summary is the line of what the live input did: received, spooled,
// waited, reconnections, latency.
func (r *liveRun) summary() string {
	st := r.stream.Stats()
	line := fmt.Sprintf("live: received %s", online.Bytes(st.Received))
	if st.SpooledAll > 0 {
		line += fmt.Sprintf(", spooled %s", online.Bytes(st.SpooledAll))
	}
	if st.Waited > 0 {
		line += fmt.Sprintf(", the source waited %v for room", st.Waited.Round(time.Millisecond))
	}
	if st.Reconnects > 0 || st.Cut > 0 {
		line += fmt.Sprintf(", reconnects %d, %s of cut chunks dropped", st.Reconnects, online.Bytes(st.Cut))
	}
	if st.Skipped > 0 {
		line += fmt.Sprintf(", %s before the first chunk header skipped (joined mid-stream)", online.Bytes(st.Skipped))
	}
	if l := r.mon.Latency(); l.N > 0 {
		line += ", cluster latency " + l.String()
	}
	if st.SpoolErr != nil {
		line += fmt.Sprintf("; spooling stopped: %v", st.SpoolErr)
	}
	if k := r.kafka; k != nil {
		line += fmt.Sprintf("; %s: %d messages read, next offset %d", k.Name(), k.Messages, k.Next)
		if k.Skipped > 0 {
			line += fmt.Sprintf(", %d messages not raw .tpx3 chunks skipped (the first at %s)", k.Skipped, k.FirstSkipped)
		}
	}
	return line
}

// liveSignals let a live run go on after the first signal: that one stops
// the input and the run clusters what it received; a second one stops the
// run at once (the outputs are still completed); a third ends the process.
type liveSignals struct {
	live  atomic.Bool
	again chan struct{} // closed at the second signal of a live run
}

type liveSignalsKey struct{}

// untilSecondSignal returns a context that a second signal cancels (with
// the first one's cause), for the part of a live run that goes on after
// the first; it marks the run live. Call stop when the run is over.
func untilSecondSignal(ctx context.Context) (run context.Context, stop func()) {
	run, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if s, ok := ctx.Value(liveSignalsKey{}).(*liveSignals); ok {
		s.live.Store(true)
		go func() {
			select {
			case <-s.again:
				cancel(context.Cause(ctx))
			case <-run.Done():
			}
		}()
	}
	return run, func() { cancel(nil) }
}
