package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/internal/kafkatest"
)

// member starts `hitflow cluster --group` as a process of its own.
func member(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"cluster", "--group", "g"}, args...)...)
	cmd.Env = append(os.Environ(), "HITFLOW_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// TestGroupSurvivesKill: two members of a group cluster four detectors'
// raw data as it is published; one is killed (SIGKILL) half way. The
// other takes its partitions over, and the events read committed are
// those of each detector's file clustered and published by a plain run,
// each exactly once.
func TestGroupSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 20 s")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "raw"), kfake.SeedTopics(2, "events"),
		kfake.SeedTopics(1, "offline"), kfake.GroupMinSessionTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	dir := t.TempDir()
	const start = "2026-11-27T08:00:00Z"
	var msgs [][][]byte
	for p := range 4 {
		in := filepath.Join(dir, fmt.Sprint(p, ".tpx3"))
		if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--dataset", "pion45", "--hits", "200000", "--seed", fmt.Sprint(20+p), "--disorder", "20us", "-o", in); code != 0 {
			t.Fatal(stderr)
		}
		// The reference: the file clustered and published by a plain run.
		if code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "single", "--source", fmt.Sprint("det_", p), "--start", start, "-o", "kafka://"+addr+"/offline", in); code != 0 {
			t.Fatal(stderr)
		}
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, fixture.Rechunk(raw, 200))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("raw"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	args := []string{"-q", "--layout", "single", "--source", "det", "--start", start, "--session-timeout", "2s", "--idle", "6s", "-o", "kafka://" + addr + "/events", "kafka://" + addr + "/raw"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := l.Addr().String()
	l.Close()
	a, aErr := member(t, args...)
	b, bErr := member(t, append([]string{"--metrics", metrics}, args...)...)
	const rounds = 10
	for r := range rounds {
		if r == rounds/2 {
			a.Process.Signal(syscall.SIGKILL)
		}
		for p, m := range msgs {
			for _, msg := range m[r*len(m)/rounds : (r+1)*len(m)/rounds] {
				if err := cl.ProduceSync(context.Background(), &kgo.Record{Partition: int32(p), Value: msg}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(400 * time.Millisecond)
	}
	if err := a.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the killed member: %v: %s", err, aErr)
	}
	// The survivor's metrics show it holding every partition, with
	// transactions committed.
	held := regexp.MustCompile(`(?m)^hitflow_group_partitions 4$`)
	committed := regexp.MustCompile(`(?m)^hitflow_group_commits_total [1-9]`)
	var body string
	for deadline := time.Now().Add(15 * time.Second); !held.MatchString(body) || !committed.MatchString(body); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the surviving member's metrics:\n%s", body)
		}
		if resp, err := http.Get("http://" + metrics + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
	}
	if err := b.Wait(); err != nil {
		t.Fatalf("the surviving member: %v: %s", err, bErr)
	}
	if !strings.Contains(bErr.String(), "partitions [0 1 2 3]") || !strings.Contains(bErr.String(), "taken over from their state") {
		t.Errorf("the surviving member did not take every partition over: %s", bErr)
	}
	got, want := kafkatest.CommittedEvents(t, []string{addr}, "events"), kafkatest.CommittedEvents(t, []string{addr}, "offline")
	if len(want) != 4 {
		t.Fatalf("%d sources in the reference", len(want))
	}
	for src, w := range want {
		if !slices.Equal(got[src], w) {
			t.Errorf("source %s: %d events published by the group, %d by a plain run", src, len(got[src]), len(w))
		}
	}
	if len(got) != len(want) {
		t.Errorf("sources %d, want %d", len(got), len(want))
	}
}

// TestGroupUsage: what a group member cannot do is refused before any
// work, naming the flags.
func TestGroupUsage(t *testing.T) {
	in, out := "kafka://127.0.0.1:1/raw", "kafka://127.0.0.1:1/events"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--group", "g", "-o", out, "run.tpx3"}, "--group reads one kafka://"},
		{[]string{"--group", "g", "-o", "x.csv", in}, "--group reads one kafka://"},
		{[]string{"--group", "g", "--hits", "h.csv", "-o", out, in}, "--hits, --tdc, --calib"},
		{[]string{"--group", "g", "--mode", "lanes", "-o", out, in}, "--mode and --workers"},
		{[]string{"--group", "g", "--partition", "1", "-o", out, in}, "--partition, --from-end and --offset do not apply"},
		{[]string{"--group", "g", "--spool", "/tmp", "-o", out, in}, "--rotate and --spool do not apply"},
		{[]string{"--group", "g", "--session-timeout", "10ms", "-o", out, in}, "at least 1s"},
		{[]string{"--session-timeout", "3s", "-o", out, in}, "--session-timeout is for --group"},
		{[]string{"--group", "g", "--delivery-timeout", "1m", "-o", out, in}, "--delivery-timeout does not apply with --group"},
		{[]string{"--group", "g", "-o", in, in}, "the events would land among the raw data"},
		{[]string{"-o", in, in}, "the events would land among the raw data"},
	} {
		code, _, stderr := hitflow(t, append([]string{"cluster", "-q"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
}
