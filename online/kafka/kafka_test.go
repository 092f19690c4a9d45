package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

var start = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func broker(t *testing.T, topics ...string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// consume reads every record of the topic.
func consume(t *testing.T, addrs []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		f := cl.PollFetches(ctx)
		if err := f.Err0(); err != nil {
			t.Fatalf("after %d of %d records: %v", len(recs), n, err)
		}
		recs = append(recs, f.Records()...)
	}
	return recs
}

func options(addrs []string, topic string) Options {
	grid, _ := analysis.NewGrid(256, 256, 2)
	return Options{Target: Target{Brokers: addrs, Topic: topic}, Compression: "lz4",
		Events: ev44.Options{Source: "tpx3-1", Grid: grid, Start: start, MaxEvents: 500}}
}

// TestPublish: the messages on the topic are those of the encoder, in
// order, each once, keyed by the source.
func TestPublish(t *testing.T) {
	c := broker(t, "events")
	batches := fixture.Clusters(t, false)
	opt := options(c.ListenAddrs(), "events")
	p, err := NewPublisher(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := p.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The same clusters through an encoder alone.
	e, _ := ev44.NewEncoder(opt.Events)
	var want [][]byte
	keep := func(b []byte) error { want = append(want, slices.Clone(b)); return nil }
	for _, b := range batches {
		e.Encode(b, keep)
	}
	e.Flush(keep)
	if p.Messages != int64(len(want)) || len(want) < 3 {
		t.Fatalf("published %d messages, want %d", p.Messages, len(want))
	}
	recs := consume(t, c.ListenAddrs(), "events", len(want))
	for i, r := range recs {
		if !bytes.Equal(r.Value, want[i]) || string(r.Key) != "tpx3-1" || r.Partition != recs[0].Partition {
			t.Fatalf("record %d (partition %d, key %q) differs from message %d", i, r.Partition, r.Key, i)
		}
	}
	// kcat (librdkafka), a client of its own, reads the same bytes.
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Log("no kcat: the independent client is not checked")
		return
	}
	out, err := exec.Command(kcat, "-C", "-b", c.ListenAddrs()[0], "-t", "events", "-p", "-1", "-o", "beginning", "-e", "-c", "1", "-f", "%s").Output()
	if err != nil {
		t.Fatalf("kcat: %v", err)
	}
	m, err := ev44.Decode(out)
	if err != nil || m.ID != 0 || m.Source != "tpx3-1" || len(m.TimeOfFlight) != 500 || !bytes.Equal(out, want[0]) {
		t.Fatalf("kcat's first message: %v, id %d, %d events", err, m.ID, len(m.TimeOfFlight))
	}
}

// TestPublishFullMessages: messages of the default size, many in
// flight, fit the brokers' default limit (1 MB a batch).
func TestPublishFullMessages(t *testing.T) {
	c := broker(t, "events")
	opt := options(c.ListenAddrs(), "events")
	opt.Events.MaxEvents, opt.Compression = 0, "none"
	p, err := NewPublisher(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range fixture.Batches(t, "gamma", 1<<20, 0, false) {
		n += b.Len()
		if err := p.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if want := (n + ev44.DefaultMaxEvents - 1) / ev44.DefaultMaxEvents; p.Messages != int64(want) || want < 4 {
		t.Fatalf("%d messages of %d clusters, want %d", p.Messages, n, want)
	}
}

func TestPublisherErrors(t *testing.T) {
	c := broker(t, "events")
	ctx := context.Background()
	if _, err := NewPublisher(ctx, options(c.ListenAddrs(), "nosuch")); err == nil || !strings.Contains(err.Error(), "no topic nosuch") {
		t.Errorf("unknown topic: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close() // nobody listens there
	opt := options([]string{addr}, "events")
	opt.Timeout = 2 * time.Second
	if _, err := NewPublisher(ctx, opt); err == nil || !strings.Contains(err.Error(), "no broker answers at "+addr) {
		t.Errorf("no broker: %v", err)
	}
	opt = options(c.ListenAddrs(), "events")
	opt.Compression = "gzip9"
	if _, err := NewPublisher(ctx, opt); err == nil || !strings.Contains(err.Error(), "want zstd, lz4 or none") {
		t.Errorf("compression: %v", err)
	}
}

func TestParseTarget(t *testing.T) {
	got, err := ParseTarget("kafka://a:9092,b.example:9093/det.events")
	if err != nil || !slices.Equal(got.Brokers, []string{"a:9092", "b.example:9093"}) || got.Topic != "det.events" {
		t.Errorf("%+v %v", got, err)
	}
	for _, bad := range []string{"kafka://a:9092", "kafka://a:9092/", "kafka://a/t", "kafka://:9092/t", "kafka://a:9092/t/u", "tcp://a:1/t", "kafka://u@a:1/t"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestBrokerLost: a broker that goes away during a run fails it within
// the delivery timeout, with an error that says so; nothing hangs.
func TestBrokerLost(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	opt := options(c.ListenAddrs(), "events")
	opt.Timeout = 2 * time.Second
	p, err := NewPublisher(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	batches := fixture.Clusters(t, false)
	if err := p.Write(batches[0]); err != nil {
		t.Fatal(err)
	}
	c.Close()
	began := time.Now()
	for _, b := range batches[1:] {
		if err := p.Write(b); err != nil {
			break
		}
	}
	err = p.Close()
	if err == nil || !strings.HasPrefix(err.Error(), "kafka: ") || time.Since(began) > 15*time.Second {
		t.Fatalf("after %v: %v", time.Since(began), err)
	}
	t.Log(err)
}

// TestBrokerOutage: while the broker refuses messages (it is not the
// partition's leader, as while a broker restarts or a partition moves),
// a publisher whose delivery timeout is shorter than the outage fails,
// with the client's timeout, and one without a bound publishes every
// message once the broker takes them again, each once and in order.
func TestBrokerOutage(t *testing.T) {
	batches := fixture.Clusters(t, false)
	const outage = 2500 * time.Millisecond
	for _, timeout := range []time.Duration{time.Second, -1} { // the client's shortest bound, none
		c := broker(t, "events")
		opt := options(c.ListenAddrs(), "events")
		opt.Timeout = timeout
		p, err := NewPublisher(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		refused := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.NotEnoughReplicas, Count: -1,
			When: func(kmsg.Request) bool { return time.Since(began) < outage }})
		for _, b := range batches {
			if err = p.Write(b); err != nil {
				break
			}
		}
		err = errors.Join(err, p.Close())
		t.Logf("timeout %v: %v after %v", timeout, err, time.Since(began))
		if refused.Hits() == 0 {
			t.Fatalf("timeout %v: no request met the outage", timeout)
		}
		if timeout > 0 {
			if !errors.Is(err, kgo.ErrRecordTimeout) || !strings.HasPrefix(err.Error(), "kafka: ") {
				t.Errorf("timeout %v: the run ended with %v, want the delivery timeout", timeout, err)
			}
			continue
		}
		if err != nil || time.Since(began) < outage {
			t.Fatalf("without a bound: %v after %v", err, time.Since(began))
		}
		e, _ := ev44.NewEncoder(opt.Events)
		n := 0
		count := func([]byte) error { n++; return nil }
		for _, b := range batches {
			e.Encode(b, count)
		}
		e.Flush(count)
		recs := consume(t, c.ListenAddrs(), "events", n)
		for i, r := range recs {
			if m, err := ev44.Decode(r.Value); err != nil || m.ID != int64(i) {
				t.Fatalf("record %d: %v, message id %d", i, err, m.ID)
			}
		}
		if p.Messages != int64(n) || len(recs) != n {
			t.Fatalf("published %d messages, %d on the topic, want %d", p.Messages, len(recs), n)
		}
	}
}

// BenchmarkPublish: clusters published to the in-process broker over
// loopback, acknowledged (MB/s reads as Mclusters/s).
func BenchmarkPublish(b *testing.B) {
	for _, codec := range []string{"none", "lz4", "zstd"} {
		b.Run(codec, func(b *testing.B) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			batches := fixture.Batches(b, "gamma", 1<<20, 0, false)
			n := 0
			for _, x := range batches {
				n += x.Len()
			}
			opt := options(c.ListenAddrs(), "events")
			opt.Compression = codec
			opt.Events.MaxEvents = 0
			p, err := NewPublisher(context.Background(), opt)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n))
			for b.Loop() {
				for _, x := range batches {
					if err := p.Write(x); err != nil {
						b.Fatal(err)
					}
				}
				if err := p.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(p.Bytes)/float64(b.N)/float64(n), "bytes/cluster")
			p.Close()
		})
	}
}

// chunks cuts .tpx3 bytes into messages of a few whole chunks each.
func chunks(raw []byte, per int) [][]byte {
	var msgs [][]byte
	for p := 0; p < len(raw); {
		start := p
		for k := 0; k < per && p < len(raw); k++ {
			p += 8 + int(binary.LittleEndian.Uint16(raw[p+6:]))
		}
		msgs = append(msgs, raw[start:p])
	}
	return msgs
}

// TestReader: the raw messages of a partition come out as the stream
// they were cut from; a message that is not raw data is skipped and
// counted; the reading ends after Idle.
func TestReader(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "raw"), kfake.SeedTopics(3, "quads"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var raw bytes.Buffer
	w, _ := tpx3.NewHitWriter(&raw, tpx3.TPX3)
	d, _ := pixelsim.DatasetByName("pion45")
	if err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: 100000, Seed: 2}, w.Write); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	msgs := chunks(raw.Bytes(), 3)
	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("raw"))
	defer cl.Close()
	for i, m := range msgs {
		if i == 1 {
			cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("not a chunk at all")})
		}
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: m}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewReader(context.Background(), ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "raw"}, Partition: -1, Idle: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, raw.Bytes()) || r.Messages != int64(len(msgs)) || r.Skipped != 1 || !strings.Contains(r.FirstSkipped, "no chunk header") || r.Next != int64(len(msgs)+1) {
		t.Fatalf("read %d bytes of %d, %d messages of %d, %d skipped (%s), next offset %d", len(got), raw.Len(), r.Messages, len(msgs), r.Skipped, r.FirstSkipped, r.Next)
	}
	// The next offset is the first message not passed on whole: after
	// messages 0, 1 (the garbage, skipped) and 2, and a byte of 3, 3.
	r3, err := NewReader(context.Background(), ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "raw"}, Partition: 0, Idle: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	first := make([]byte, len(msgs[0])+len(msgs[1])+1)
	if _, err := io.ReadFull(r3, first); err != nil || r3.Next != 3 {
		t.Fatalf("after two messages and a byte: next offset %d, %v", r3.Next, err)
	}
	// Resuming there gives the rest of the stream, from message 2 on.
	r5, err := NewReader(context.Background(), ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "raw"}, Offset: 3, Idle: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r5.Close()
	rest, err := io.ReadAll(r5)
	if err != nil || !bytes.Equal(rest, raw.Bytes()[len(msgs[0])+len(msgs[1]):]) {
		t.Fatalf("resumed at offset 3: %d bytes, %v", len(rest), err)
	}
	if _, err := NewReader(context.Background(), ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "raw"}, Offset: 3, FromEnd: true}); err == nil {
		t.Error("both the end and an offset")
	}
	for _, tc := range []struct {
		opt  ReadOptions
		want string
	}{
		{ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "nosuch"}, Partition: -1}, "no topic nosuch"},
		{ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "quads"}, Partition: -1}, "3 partitions"},
		{ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "quads"}, Partition: 3}, "no partition 3"},
	} {
		if _, err := NewReader(context.Background(), tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v", tc.opt, err)
		}
	}
	// Stopped: the context's error, at once.
	ctx, cancel := context.WithCancel(context.Background())
	r2, err := NewReader(ctx, ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "quads"}, Partition: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := io.ReadAll(r2); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: %v", err)
	}
	r4, err := NewReader(context.Background(), ReadOptions{Target: Target{Brokers: c.ListenAddrs(), Topic: "quads"}, Partition: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r4.Close()
	time.AfterFunc(100*time.Millisecond, func() { r4.SetReadDeadline(time.Now()) })
	if _, err := io.ReadAll(r4); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
}
