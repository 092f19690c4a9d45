package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/pixel"
)

// kafkaBroker starts an in-process Kafka broker with a topic of one
// partition, for the test's time, and returns its address.
func kafkaBroker(t *testing.T, topic string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// TestPublishToKafka: cluster -o kafka:// publishes every cluster as an
// ev44 event with the pixel and time of the clusters file of the same
// run, in consecutive messages.
func TestPublishToKafka(t *testing.T) {
	addr := kafkaBroker(t, "events")
	dir := t.TempDir()
	in, file := filepath.Join(dir, "p.tpx3"), filepath.Join(dir, "c.parquet")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--dataset", "pion45", "--hits", "200000", "-o", in); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "single", "-o", file, in); code != 0 {
		t.Fatal(stderr)
	}
	target := "kafka://" + addr + "/events"
	code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "single", "--source", "det-7", "--super-resolution", "2", "--compression", "lz4", "--start", "2026-11-27T08:00:00Z", "--delivery-timeout", "0", "-o", target, in)
	if code != 0 || !strings.Contains(stderr, "hitflow: published ") || !strings.Contains(stderr, "to "+target+"; clusters not published: 0 off the sensor") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, err := format.ReadClusters(file)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC).UnixNano()
	events, msgs := 0, int64(0)
	for events < want.Len() {
		f := cl.PollFetches(ctx)
		if err := f.Err0(); err != nil {
			t.Fatalf("after %d events: %v", events, err)
		}
		for _, r := range f.Records() {
			m, err := ev44.Decode(r.Value)
			if err != nil || m.Source != "det-7" || m.ID != msgs {
				t.Fatalf("message %d: %v, source %q, id %d", msgs, err, m.Source, m.ID)
			}
			msgs++
			m.Events(func(ns int64, p int32) {
				i := events
				x, y := int32((want.X[i]+0.5)*2), int32((want.Y[i]+0.5)*2)
				if ns != start+int64(want.FirstToA[i]/pixel.Nanosecond) || p != y*512+x {
					t.Fatalf("event %d: %d ns, pixel %d; the file's cluster: %d ns, pixel %d", i, ns-start, p, want.FirstToA[i]/pixel.Nanosecond, y*512+x)
				}
				events++
			})
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-o", "kafka://" + addr + "/nosuch", in}, exitRuntime, "no topic nosuch"},
		{[]string{"-o", "kafka://" + addr, in}, exitUsage, "no topic"},
		{[]string{"-o", target, "--rotate", "1m", in}, exitUsage, "--rotate"},
		{[]string{"-o", target, "--shapes", in}, exitUsage, "--shapes"},
		{[]string{"-o", target, "--compression", "gzip", in}, exitUsage, "--compression"},
		{[]string{"-o", target, "--start", "yesterday", in}, exitUsage, "--start"},
		{[]string{"-o", filepath.Join(dir, "x.csv"), "--source", "a", in}, exitUsage, "are for -o kafka://"},
		{[]string{"-o", filepath.Join(dir, "x.csv"), "--delivery-timeout", "1m", in}, exitUsage, "are for -o kafka://"},
		{[]string{"-o", target, "--delivery-timeout", "500ms", in}, exitUsage, "want 0 (no bound) or at least 1s"},
		{[]string{"-o", target, "--delivery-timeout", "-1s", in}, exitUsage, "want 0 (no bound) or at least 1s"},
	} {
		code, _, stderr := hitflow(t, append([]string{"cluster", "-q"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.csv")); err == nil {
		t.Error("a refused run wrote its output")
	}
}

// TestClusterFromKafka: the raw chunks of a run published on a topic
// cluster to the file's clusters, byte for byte; a message that is not
// raw data is skipped and counted.
func TestClusterFromKafka(t *testing.T) {
	addr := kafkaBroker(t, "raw")
	dir := t.TempDir()
	in, want, got := filepath.Join(dir, "p.tpx3"), filepath.Join(dir, "want.csv"), filepath.Join(dir, "got.csv")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--dataset", "pion45", "--hits", "300000", "--disorder", "20us", "-o", in); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "-q", "-o", want, in); code != 0 {
		t.Fatal(stderr)
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("raw"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	n := 0
	for p := 0; p < len(raw); n++ {
		start := p
		for k := 0; k < 5 && p < len(raw); k++ { // five chunks a message
			p += 8 + int(binary.LittleEndian.Uint16(raw[p+6:]))
		}
		if n == 3 {
			cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("TPX3 but no chunk")})
		}
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: raw[start:p]}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := hitflow(t, "cluster", "-q", "--idle", "1s", "-o", got, "kafka://"+addr+"/raw")
	if code != 0 || !strings.Contains(stderr, "kafka topic raw partition 0: "+strconv.Itoa(n)+" messages read, next offset "+strconv.Itoa(n+1)+", 1 messages not raw .tpx3 chunks skipped (the first at offset 3: ") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(want)
	b, _ := os.ReadFile(got)
	if !bytes.Equal(a, b) || len(a) < 1000 {
		t.Fatalf("clusters from the topic differ from the file's (%d and %d bytes)", len(b), len(a))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--partition", "1", in}, "--partition, --from-end and --offset are for a kafka:// input"},
		{[]string{"--offset", "-3", "kafka://" + addr + "/raw"}, "--offset must be"},
		{[]string{"kafka://" + addr + "/raw", in}, "only input"},
		{[]string{"--partition", "4", "kafka://" + addr + "/raw"}, "no partition 4"},
	} {
		code, _, stderr := hitflow(t, append([]string{"cluster", "-q", "-o", os.DevNull}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
}
