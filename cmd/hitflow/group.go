package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/online"
	"github.com/hitflow/hitflow/online/kafka"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// groupFlags make the run a member of a consumer group.
type groupFlags struct {
	name    string
	session time.Duration
}

func (g *groupFlags) add(f *pflag.FlagSet) {
	f.StringVar(&g.name, "group", "", "with kafka:// input and output: run as a member of this consumer group, sharing the topic's partitions (detectors) with its other members, each event published once (docs/live.md)")
	f.DurationVar(&g.session, "session-timeout", kafka.DefaultSession, "with --group: how long a member may go silent before its partitions move to the others")
}

// checkGroup refuses what a group member cannot do.
func (o clusterOptions) checkGroup(files []string) error {
	if o.group.name == "" {
		if o.group.session != kafka.DefaultSession {
			return usagef("--session-timeout is for --group")
		}
		return nil
	}
	switch {
	case len(files) != 1 || !kafka.IsTarget(files[0]) || !kafka.IsTarget(o.out):
		return usagef("--group reads one kafka://BROKER/TOPIC input and publishes to -o kafka://BROKER/TOPIC")
	case o.hits != "" || o.tdc != "" || o.calib != "" || len(o.keep) > 0 || o.classes != "" || o.flightPath != 0:
		return usagef("--group publishes ev44 events (pixel and time): --hits, --tdc, --calib, --keep, --classes and --flight-path do not apply")
	case o.mode != "auto" && o.mode != "sequential" || o.workers != 0:
		return usagef("--group clusters each partition on one core (the partitions share the cores): --mode and --workers do not apply")
	case o.live.partition != -1 || o.live.fromEnd || o.live.offset != 0:
		return usagef("--group reads every partition given to the member, from the group's committed offsets: --partition, --from-end and --offset do not apply")
	case o.live.rotate != "" || o.live.spool != "":
		return usagef("--rotate and --spool do not apply with --group: the events go to a topic, and the raw data waits in its own")
	case o.group.session < time.Second:
		return usagef("--session-timeout must be at least 1s")
	case o.kafka.timeout != kafka.DefaultTimeout:
		return usagef("--delivery-timeout does not apply with --group: a member whose messages are not delivered starts a new client and goes on from the committed state")
	}
	return nil
}

// runGroup runs the member until its partitions go quiet for --idle
// (when given) or a signal: the first commits what was clustered and
// leaves the group.
func runGroup(ctx context.Context, o clusterOptions, input string, job pipeline.Job, edge *tpx3.TDCEdge, stderr io.Writer) error {
	in, err := kafka.ParseTarget(input)
	if err != nil {
		return usageError{err}
	}
	out, _ := kafka.ParseTarget(o.out) // checked
	grid, err := analysis.NewGrid(job.Cluster.Width, job.Cluster.Height, o.kafka.scale)
	if err != nil {
		return usagef("--super-resolution: %w", err)
	}
	start := time.Now()
	if o.kafka.start != "" {
		start, _ = time.Parse(time.RFC3339Nano, o.kafka.start) // checked
	}
	opt := kafka.GroupOptions{In: in, Out: out, Group: o.group.name, Compression: o.kafka.compression, Session: o.group.session,
		Processing: kafka.Processing{Layout: job.Reader.Layout, Mask: job.Mask, Correction: job.Correction, Unsorted: job.Unsorted, Cluster: job.Cluster,
			TOF: edge, Period: pixel.Time(o.period.Nanoseconds()) * pixel.Nanosecond,
			Events: ev44.Options{Source: o.kafka.source, Grid: grid, Start: start}}}
	if job.Correction != nil {
		b, err := os.ReadFile(o.timewalk)
		if err != nil {
			return err
		}
		opt.Processing.CorrectionID = fmt.Sprintf("%x", sha256.Sum256(b))[:16]
	}
	if o.live.idleSet {
		opt.Idle = o.live.idle
	}
	if !o.quiet {
		opt.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, "hitflow: "+format+"\n", args...) }
	}
	if o.live.metrics != "" {
		progress := &kafka.GroupProgress{}
		opt.Progress = progress.Update
		stop, err := online.ServeMetrics(o.live.metrics, progress.Collectors()...)
		if err != nil {
			return usageError{err}
		}
		defer stop()
	}
	st, err := kafka.RunGroup(ctx, opt)
	fmt.Fprintf(stderr, "hitflow: group %s member: partitions %v; %d messages (%d bytes) clustered, %d not raw .tpx3 skipped, %d offsets without a message (expired, or transaction markers); %d clusters published in %d ev44 messages to %s, %d not published (off the sensor, before the first pulse, or a time of flight over 2.1 s); %d transactions committed, %d aborted; %d partitions taken over from their state; %d new Kafka clients after a failed one; %d late hits\n",
		o.group.name, st.Partitions, st.Messages, st.Bytes, st.Skipped, st.Missed, st.Clusters, st.EventMessages, o.out, st.Left, st.Commits, st.Aborts, st.Restored, st.Restarts, st.Late)
	return err
}
