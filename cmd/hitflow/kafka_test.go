package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/pixel"
)

// TestPublishToKafka: cluster -o kafka:// publishes every cluster as an
// ev44 event with the pixel and time of the clusters file of the same
// run, in consecutive messages.
func TestPublishToKafka(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	dir := t.TempDir()
	in, file := filepath.Join(dir, "p.tpx3"), filepath.Join(dir, "c.parquet")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--dataset", "pion45", "--hits", "200000", "-o", in); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "single", "-o", file, in); code != 0 {
		t.Fatal(stderr)
	}
	target := "kafka://" + addr + "/events"
	code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "single", "--source", "det-7", "--super-resolution", "2", "--compression", "lz4", "--start", "2026-11-27T08:00:00Z", "-o", target, in)
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
