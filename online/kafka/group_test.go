package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/internal/kafkatest"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// groupData simulates a detector a partition: raw .tpx3, out of order
// by up to 20 us.
func groupData(t *testing.T, parts, hits int) [][]byte {
	t.Helper()
	d, _ := pixelsim.DatasetByName("pion45")
	var raws [][]byte
	for p := range parts {
		var raw bytes.Buffer
		w, _ := tpx3.NewHitWriter(&raw, tpx3.TPX3)
		if err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: hits, Seed: uint64(10 + p), Disorder: 20 * pixel.Microsecond}, w.Write); err != nil || w.Close() != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw.Bytes())
	}
	return raws
}

func groupProcessing(t *testing.T) Processing {
	layout, _ := tpx3.LayoutByName("single")
	grid, _ := analysis.NewGrid(256, 256, 2)
	return Processing{Layout: layout, Unsorted: 50 * pixel.Microsecond,
		Cluster: pixel.Config{Dt: 200 * pixel.Nanosecond, Width: 256, Height: 256},
		Events:  ev44.Options{Source: "det", Grid: grid, Start: start, MaxEvents: 1000}}
}

// offlineEvents clusters each partition's stream in one go, as `hitflow
// cluster` does a file, and lists the events by source.
func offlineEvents(t *testing.T, proc Processing, raws [][]byte) map[string][]string {
	t.Helper()
	want := map[string][]string{}
	for p, raw := range raws {
		opt := proc.Events
		opt.Source = proc.source(int32(p), len(raws))
		sink := &eventSink{opt: opt}
		_, err := pipeline.Run(context.Background(), pipeline.Job{
			Sources:  []pipeline.Source{{Name: "raw", R: bytes.NewReader(raw)}},
			Reader:   tpx3.Options{Layout: proc.Layout, Width: 256, Height: 256},
			Unsorted: proc.Unsorted, Cluster: proc.Cluster, Mode: pixel.Sequential, Clusters: sink,
		})
		if err != nil {
			t.Fatal(err)
		}
		want[opt.Source] = sink.events(t)
	}
	return want
}

// eventSink keeps clusters as ev44 events.
type eventSink struct {
	opt  ev44.Options
	msgs [][]byte
	enc  *ev44.Encoder
}

func (s *eventSink) Write(c *pixel.Clusters) error {
	if s.enc == nil {
		s.enc, _ = ev44.NewEncoder(s.opt)
	}
	return s.enc.Encode(c, s.keep)
}

func (s *eventSink) keep(m []byte) error { s.msgs = append(s.msgs, slices.Clone(m)); return nil }

func (*eventSink) NeedsMembers() bool { return false }

// events lists the events as kafkatest.CommittedEvents does.
func (s *eventSink) events(t *testing.T) []string {
	if s.enc != nil {
		s.enc.Flush(s.keep)
	}
	var evs []string
	for _, b := range s.msgs {
		m, err := ev44.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		m.Events(func(ns int64, p int32) { evs = append(evs, fmt.Sprint(ns, " ", p)) })
	}
	slices.Sort(evs)
	return evs
}

func publishRaw(t *testing.T, cl *kgo.Client, part int32, msgs [][]byte) {
	t.Helper()
	for _, m := range msgs {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "raw", Partition: part, Value: m}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// detector is a broker with the topics raw and events and a detector's
// hits published to raw, in msgs messages, with the settings and the
// events of the stream clustered in one go.
type detector struct {
	c     *kfake.Cluster
	addrs []string
	proc  Processing
	want  map[string][]string
	msgs  int
}

func newDetector(t *testing.T, hits int) detector {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "raw"), kfake.SeedTopics(1, "events"),
		kfake.GroupMinSessionTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	raws := groupData(t, 1, hits)
	proc := groupProcessing(t)
	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	msgs := fixture.Rechunk(raws[0], 300)
	publishRaw(t, cl, 0, msgs)
	return detector{c, c.ListenAddrs(), proc, offlineEvents(t, proc, raws), len(msgs)}
}

// sameEvents fails the test unless the events read committed are want.
func sameEvents(t *testing.T, addrs []string, want map[string][]string) {
	t.Helper()
	got := kafkatest.CommittedEvents(t, addrs, "events")
	for src, w := range want {
		if !slices.Equal(got[src], w) {
			t.Errorf("source %s: %d events, want %d as clustered in one go", src, len(got[src]), len(w))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d sources, want %d", len(got), len(want))
	}
}

// TestGroupHandsOver: a member clusters half of four detectors' data and
// stops; two members then share the partitions, taking them over from
// the states, while the rest is published. The events read committed are
// those of each stream clustered in one go, each once.
func TestGroupHandsOver(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "raw"), kfake.SeedTopics(2, "events"),
		kfake.GroupMinSessionTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	raws := groupData(t, 4, 40000)
	proc := groupProcessing(t)
	want := offlineEvents(t, proc, raws)
	cl, _ := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	msgs := make([][][]byte, len(raws))
	for p, raw := range raws {
		msgs[p] = fixture.Rechunk(raw, 300)
		publishRaw(t, cl, int32(p), msgs[p][:len(msgs[p])/2])
		publishRaw(t, cl, int32(p), [][]byte{[]byte("not raw data")})
	}
	opt := GroupOptions{In: Target{addrs, "raw"}, Out: Target{addrs, "events"}, Group: "g1", Compression: "lz4",
		Processing: proc, Commit: 200 * time.Millisecond, Session: 2 * time.Second}
	// The first member, stopped once it has committed.
	ctx, cancel := context.WithCancel(context.Background())
	first := opt
	first.Logf = func(string, ...any) { time.AfterFunc(1500*time.Millisecond, cancel) }
	st, err := RunGroup(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if st.Commits == 0 || len(st.Partitions) != 4 || st.Messages == 0 {
		t.Fatalf("the first member: %+v", st)
	}
	// Two members share the partitions while the rest comes.
	var wg sync.WaitGroup
	stats := make([]GroupStats, 2)
	errs := make([]error, 2)
	opt.Idle = 3 * time.Second
	for i := range stats {
		wg.Go(func() { stats[i], errs[i] = RunGroup(context.Background(), opt) })
	}
	for p := range raws {
		publishRaw(t, cl, int32(p), msgs[p][len(msgs[p])/2:])
	}
	wg.Wait()
	restored, skipped := int64(0), st.Skipped
	for i, e := range errs {
		if e != nil {
			t.Fatal(e)
		}
		restored += stats[i].Restored
		skipped += stats[i].Skipped
	}
	if restored < 4 || skipped != 4 {
		t.Errorf("%d partitions taken over from a state, %d messages skipped; want at least 4 and 4", restored, skipped)
	}
	sameEvents(t, addrs, want)
}

// TestGroupRefuses: a member refuses a group name Kafka cannot name a
// topic after, a missing topic, and the state of a partition clustered
// with other settings, naming both.
func TestGroupRefuses(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "raw"), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	raws := groupData(t, 1, 20000)
	cl, _ := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("raw"))
	defer cl.Close()
	publishRaw(t, cl, 0, fixture.Rechunk(raws[0], 500))
	opt := GroupOptions{In: Target{addrs, "raw"}, Out: Target{addrs, "events"}, Group: "g", Processing: groupProcessing(t),
		Commit: 100 * time.Millisecond, Idle: 500 * time.Millisecond}
	for _, tc := range []struct {
		change func(*GroupOptions)
		want   string
	}{
		{func(o *GroupOptions) { o.Group = "a group" }, `group "a group": use letters`},
		{func(o *GroupOptions) { o.In.Topic = "nosuch" }, "no topic nosuch"},
		{func(o *GroupOptions) { o.Out.Topic = "nosuch" }, "no topic nosuch"},
		{func(o *GroupOptions) { o.Compression = "gzip" }, `compression "gzip"`},
		{func(o *GroupOptions) { o.Out.Topic = "raw" }, "the raw data's topic"},
	} {
		o := opt
		tc.change(&o)
		if _, err := RunGroup(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
	// The group's first member clusters the partition and commits its
	// state; one with another dt refuses to go on from it.
	st, err := RunGroup(context.Background(), opt)
	if err != nil || st.Messages == 0 || st.Commits == 0 {
		t.Fatalf("%+v, %v", st, err)
	}
	other := opt
	other.Processing.Cluster.Dt = 300 * pixel.Nanosecond
	if _, err := RunGroup(context.Background(), other); err == nil || !strings.Contains(err.Error(), "other settings") || !strings.Contains(err.Error(), "dt 200 ns") || !strings.Contains(err.Error(), "dt 300 ns") {
		t.Fatalf("another dt: %v", err)
	}
}

// TestGroupTimeOfFlight: a real run with TDC pulses, handed over half
// way, publishes the events of a plain run with time of flight: the
// pulses not yet passed and the counts go with the state.
func TestGroupTimeOfFlight(t *testing.T) {
	raw, err := os.ReadFile("../../../shared/data/tpx3/greg_220ms_TDC_GDC_enabled_20230214_3.tpx3")
	if err != nil {
		t.Skip("no shared data:", err)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "raw"), kfake.SeedTopics(1, "events"),
		kfake.GroupMinSessionTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	layout, _ := tpx3.LayoutByName("quad")
	grid, _ := analysis.NewGrid(layout.Width, layout.Height, 1)
	edge := tpx3.TDC1Rise
	proc := Processing{Layout: layout, Unsorted: 500 * pixel.Microsecond, TOF: &edge, Period: 0,
		Cluster: pixel.Config{Dt: 200 * pixel.Nanosecond, Width: layout.Width, Height: layout.Height},
		Events:  ev44.Options{Source: "greg", Grid: grid, Start: start}}
	// The plain run: the pipeline, its TDC pulses to a TOF, the TOF on
	// the clusters written.
	tof := &analysis.TOF{}
	sink := &eventSink{opt: proc.Events}
	_, err = pipeline.Run(context.Background(), pipeline.Job{
		Sources: []pipeline.Source{{Name: "greg", R: bytes.NewReader(raw)}},
		Reader:  tpx3.Options{Layout: layout, Width: layout.Width, Height: layout.Height},
		TDC: func(ps []tpx3.TDC) error {
			for _, p := range ps {
				if p.Edge == edge {
					tof.AddReferences([]pixel.Time{p.Time})
				}
			}
			return nil
		},
		Filter:   func(c *pixel.Clusters) (*pixel.Clusters, error) { tof.Assign(c); return c, nil },
		Unsorted: proc.Unsorted, Cluster: proc.Cluster, Mode: pixel.Sequential, Clusters: sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := sink.events(t)
	if len(want) != 76 { // 365 hits among 13291 pulses
		t.Fatalf("%d events of the plain run, want 76", len(want))
	}
	cl, _ := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("raw"))
	defer cl.Close()
	msgs := fixture.Rechunk(raw, 100)
	publishRaw(t, cl, 0, msgs[:len(msgs)/2])
	opt := GroupOptions{In: Target{addrs, "raw"}, Out: Target{addrs, "events"}, Group: "tof", Processing: proc,
		Commit: 100 * time.Millisecond, Session: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	first := opt
	first.Logf = func(string, ...any) { time.AfterFunc(time.Second, cancel) }
	if _, err := RunGroup(ctx, first); err != nil {
		t.Fatal(err)
	}
	publishRaw(t, cl, 0, msgs[len(msgs)/2:])
	opt.Idle = time.Second
	st, err := RunGroup(context.Background(), opt)
	// A client that fails (kfake refuses now and then a first produce
	// handled out of order) takes the partition from its state again.
	if err != nil || st.Restored < 1 || st.Restored > 1+st.Restarts {
		t.Fatalf("the second member: %+v, %v", st, err)
	}
	got := kafkatest.CommittedEvents(t, addrs, "events")["greg"]
	if !slices.Equal(got, want) {
		t.Fatalf("%d events with time of flight from the group, %d from a plain run", len(got), len(want))
	}
}

// TestGroupFinishAborted: a member going idle finishes its partitions'
// open clusters in a last transaction; when the brokers abort that one
// (a rebalance as the other members leave), the member takes its
// partitions again from their states and finishes them anew, rather than
// leaving with the last clusters of each stream unwritten.
func TestGroupFinishAborted(t *testing.T) {
	d := newDetector(t, 20000)
	c := d.c
	// The first commit of the end offset is the last message's; the
	// second, the finishing one: aborted once.
	end, seen, aborted := int64(d.msgs), 0, false
	c.ControlKey(int16(kmsg.TxnOffsetCommit), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.TxnOffsetCommitRequest)
		atEnd := false
		for _, tp := range req.Topics {
			for _, p := range tp.Partitions {
				atEnd = atEnd || p.Offset == end // the only group topic (named by its id in newer requests)
			}
		}
		if !atEnd || aborted {
			return nil, nil, false
		}
		if seen++; seen < 2 {
			return nil, nil, false
		}
		aborted = true
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, tp := range req.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = tp.Topic, tp.TopicID
			for _, p := range tp.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.RebalanceInProgress.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
	st, err := RunGroup(context.Background(), GroupOptions{In: Target{d.addrs, "raw"}, Out: Target{d.addrs, "events"}, Group: "g1",
		Processing: d.proc, Commit: 100 * time.Millisecond, Idle: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !aborted || st.Aborts != 1 {
		t.Fatalf("aborted %v, %d aborts: the finishing transaction was not the one aborted", aborted, st.Aborts)
	}
	sameEvents(t, d.addrs, d.want)
}

// TestOffsetsOnlyWithState: a transaction commits the input's offsets of
// the partitions whose state it writes, each naming its state, and drops
// the others the client listed (polled, but no state written: committed
// with the client's own metadata, no member could take them over); other
// topics' offsets stay.
func TestOffsetsOnlyWithState(t *testing.T) {
	m := &member{opt: GroupOptions{In: Target{Topic: "raw"}}, tasks: map[int32]*task{
		0: {part: 0, next: 50}, 1: {part: 1, next: 7}, 2: {part: 2, next: -1}, 3: {part: 3, next: 90}}}
	req := kmsg.NewTxnOffsetCommitRequest()
	for _, name := range []string{"raw", "other"} {
		topic := kmsg.NewTxnOffsetCommitRequestTopic()
		topic.Topic = name
		for p := range int32(4) {
			part := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			part.Partition, part.Offset, part.Metadata = p, 1000+int64(p), kmsg.StringPtr("kgo-x")
			topic.Partitions = append(topic.Partitions, part)
		}
		req.Topics = append(req.Topics, topic)
	}
	m.offsets(&req, []int32{1, 2, 3}, map[int32]int64{1: 11, 2: 12, 3: 13})
	got := map[string][]string{}
	for _, topic := range req.Topics {
		for _, p := range topic.Partitions {
			got[topic.Topic] = append(got[topic.Topic], fmt.Sprintf("%d@%d %s", p.Partition, p.Offset, *p.Metadata))
		}
	}
	want := map[string][]string{
		"other": {"0@1000 kgo-x", "1@1001 kgo-x", "2@1002 kgo-x", "3@1003 kgo-x"},
		"raw":   {"1@7 " + statePrefix + "11", "3@90 " + statePrefix + "13"},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("committed %v, want %v", got, want)
	}
	req.Topics = req.Topics[:1] // "other"
	m.offsets(&req, nil, nil)
	if len(req.Topics) != 1 || req.Topics[0].Topic != "other" {
		t.Fatalf("nothing to commit: %+v", req.Topics)
	}
}

// TestGroupName: the names Kafka allows in a topic name, and no others.
func TestGroupName(t *testing.T) {
	for name, ok := range map[string]bool{
		"g1": true, "x.y_z-1": true, strings.Repeat("a", 200): true, "Z9": true,
		"": false, strings.Repeat("a", 201): false, "a b": false, "a/b": false, "é": false, "a\n": false, "a:b": false,
	} {
		if groupName(name) != ok {
			t.Errorf("%q: allowed %v", name, !ok)
		}
	}
}

// TestGroupRestarts: a member whose Kafka client fails (the brokers
// refuse a transaction's offsets, or its events, with an error that
// leaves the transactional producer unusable) starts a new client and
// goes on from the committed states: the events read committed are those
// of the stream clustered in one go, each once.
func TestGroupRestarts(t *testing.T) {
	// The second commit of the raw data's offsets, when the first is in
	// a committed state; the first events (the only request of them).
	for _, c := range []struct {
		key   kmsg.Key
		topic string
		n     int
	}{{kmsg.TxnOffsetCommit, "raw", 2}, {kmsg.Produce, "events", 1}} {
		t.Run(c.key.Name(), func(t *testing.T) {
			d := newDetector(t, 20000)
			seen := 0
			fault := d.c.Fault(kfake.Fault{Keys: []kmsg.Key{c.key}, Topic: c.topic, Err: kerr.OutOfOrderSequenceNumber,
				When: func(kmsg.Request) bool { seen++; return seen >= c.n }})
			var logs []string
			var mu sync.Mutex
			var progress GroupProgress
			st, err := RunGroup(context.Background(), GroupOptions{In: Target{d.addrs, "raw"}, Out: Target{d.addrs, "events"}, Group: "g1",
				Processing: d.proc, Commit: 100 * time.Millisecond, Idle: time.Second, Session: time.Second, Progress: progress.Update,
				Logf: func(format string, args ...any) {
					mu.Lock()
					logs = append(logs, fmt.Sprintf(format, args...))
					mu.Unlock()
				}})
			if err != nil {
				t.Fatal(err)
			}
			if fault.Hits() != 1 || st.Restarts != 1 {
				t.Fatalf("%d requests failed, %d restarts; want 1 and 1", fault.Hits(), st.Restarts)
			}
			if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "OUT_OF_ORDER_SEQUENCE_NUMBER") }) {
				t.Errorf("the log does not name the failure: %q", logs)
			}
			// The metrics, after the last transaction, are the summary's.
			got := gather(t, progress.Collectors())
			for name, v := range map[string]int64{"hitflow_group_commits_total": st.Commits, "hitflow_group_client_restarts_total": 1,
				"hitflow_group_clusters_total": st.Clusters, "hitflow_group_messages_total": st.Messages, "hitflow_group_restored_partitions_total": st.Restored,
				"hitflow_group_event_messages_total": st.EventMessages, "hitflow_group_partitions": 1} {
				if got[name] != float64(v) || v == 0 && name != "hitflow_group_restored_partitions_total" {
					t.Errorf("%s = %v, want %d", name, got[name], v)
				}
			}
			sameEvents(t, d.addrs, d.want)
		})
	}
}

// gather reads the collectors' metrics by name.
func gather(t *testing.T, cs []prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			got[mf.GetName()] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return got
}

// TestGroupGivesUp: a member whose every transaction fails starts new
// clients, waiting longer each time, for five session timeouts, then
// fails with the brokers' error; the raw data's offsets stay uncommitted.
func TestGroupGivesUp(t *testing.T) {
	d := newDetector(t, 5000)
	d.c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.TxnOffsetCommit}, Err: kerr.OutOfOrderSequenceNumber, Count: -1})
	session := 500 * time.Millisecond
	began := time.Now()
	st, err := RunGroup(context.Background(), GroupOptions{In: Target{d.addrs, "raw"}, Out: Target{d.addrs, "events"}, Group: "g1",
		Processing: d.proc, Commit: 100 * time.Millisecond, Idle: time.Second, Session: session})
	took := time.Since(began)
	if !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("the member ended with %v, want the brokers' error", err)
	}
	// Waits of 50, 100, 200, 400, 500 ms... between clients of at least
	// the 100 ms of a transaction each.
	if st.Restarts < 4 || st.Restarts > 20 || st.Commits != 0 || took < giveUp*session || took > 4*giveUp*session {
		t.Fatalf("%d restarts, %d commits in %v; want 4 to 20 restarts, none committed, in %v to %v", st.Restarts, st.Commits, took, giveUp*session, 4*giveUp*session)
	}
}

// TestGroupEmptyTransactions: a member that finds every message already
// committed ends a transaction of nothing each commit interval until
// idle (franz-go asks nothing of the brokers for those): only two are
// counted as committed, the partition's state as taken over and as
// finished.
func TestGroupEmptyTransactions(t *testing.T) {
	d := newDetector(t, 2000)
	opt := GroupOptions{In: Target{d.addrs, "raw"}, Out: Target{d.addrs, "events"}, Group: "g1",
		Processing: d.proc, Commit: 20 * time.Millisecond, Idle: time.Second, Session: 500 * time.Millisecond}
	first, err := RunGroup(context.Background(), opt)
	if err != nil || first.Commits == 0 || first.Messages != int64(d.msgs) {
		t.Fatalf("first member: %+v, %v", first, err)
	}
	again, err := RunGroup(context.Background(), opt)
	if err != nil || again.Messages != 0 || again.Commits != 2 {
		t.Fatalf("a member with nothing new: %d messages, %d commits (%v), want none and 2", again.Messages, again.Commits, err)
	}
}
