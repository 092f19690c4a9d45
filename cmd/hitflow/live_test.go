package main

import (
	"bytes"
	"context"
	"errors"
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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/online"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// liveSim is the run the live tests serve: pion tracks, a little out of
// order, so that the reorder window and the big clusters are exercised.
var liveSim = pixelsim.Options{Dataset: pixelsim.Datasets[2], Hits: 400_000, Seed: 11, RateMHz: 10, Disorder: 2 * pixel.Microsecond}

// liveFile writes liveSim as a .tpx3 file and returns its name and the
// clusters of an offline run of it (-o ext).
func liveFile(t *testing.T, dir, ext string) (raw, clusters string) {
	t.Helper()
	raw = filepath.Join(dir, "run.tpx3")
	if _, err := os.Stat(raw); err != nil {
		if code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "pion45", "--hits", "400000", "--seed", "11", "--rate", "10", "--disorder", "2us", "-q", "-o", raw); code != 0 {
			t.Fatal(stderr)
		}
	}
	clusters = filepath.Join(dir, "offline"+ext)
	if code, _, stderr := hitflow(t, "cluster", "-q", "-o", clusters, raw); code != 0 {
		t.Fatal(stderr)
	}
	return raw, clusters
}

// serveLive serves liveSim on a loopback port at the speed given and
// returns the address as tcp://HOST:PORT.
func serveLive(t *testing.T, sim pixelsim.Options, speed float64) string {
	addr, _ := serveLiveCounted(t, sim, speed)
	return addr
}

// serveLiveCounted is serveLive that also says how many bytes it has
// sent, for a test that must act once the client has data.
func serveLiveCounted(t *testing.T, sim pixelsim.Options, speed float64) (string, func() int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: l}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		online.Serve(ctx, counted, sim, online.ServeOptions{Speed: speed})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return "tcp://" + l.Addr().String(), counted.sent.Load
}

// countingListener counts the bytes written to the connections it
// accepts.
type countingListener struct {
	net.Listener
	sent atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, sent: &l.sent}, nil
}

type countingConn struct {
	net.Conn
	sent *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent.Add(int64(n))
	return n, err
}

func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Fatalf("%s (%d bytes) differs from %s (%d bytes)", a, len(x), b, len(y))
	}
}

// TestLiveEqualsFile: a run served over TCP, piped on standard input or
// followed while written gives the clusters of the file, byte for byte.
func TestLiveEqualsFile(t *testing.T) {
	dir := t.TempDir()
	raw, offline := liveFile(t, dir, ".csv")
	t.Run("tcp", func(t *testing.T) {
		out := filepath.Join(dir, "tcp.csv")
		code, _, stderr := hitflow(t, "cluster", "-q", "-o", out, serveLive(t, liveSim, 0))
		if code != 0 {
			t.Fatal(stderr)
		}
		sameFiles(t, out, offline)
		if !regexp.MustCompile(`live: received 3\.\d MiB, cluster latency p50 `).MatchString(stderr) {
			t.Errorf("no live summary: %s", stderr)
		}
		if !strings.Contains(stderr, " Mhit/s (1 stream, ") {
			t.Errorf("the summary does not count a stream: %s", stderr)
		}
	})
	t.Run("stdin", func(t *testing.T) {
		f, err := os.Open(raw)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out := filepath.Join(dir, "stdin.csv")
		var errb bytes.Buffer
		if code := run(context.Background(), []string{"cluster", "-q", "-o", out, "-"}, f, io.Discard, &errb); code != 0 {
			t.Fatal(errb.String())
		}
		sameFiles(t, out, offline)
	})
	t.Run("follow", func(t *testing.T) {
		data, err := os.ReadFile(raw)
		if err != nil {
			t.Fatal(err)
		}
		growing := filepath.Join(dir, "growing.tpx3")
		f, err := os.Create(growing)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		go func() {
			for pos, step := 0, 100_003; pos < len(data); pos += step {
				f.Write(data[pos:min(pos+step, len(data))])
				time.Sleep(20 * time.Millisecond)
			}
		}()
		out := filepath.Join(dir, "follow.csv")
		code, _, stderr := hitflow(t, "cluster", "-q", "--follow", "--idle", "500ms", "-o", out, growing)
		if code != 0 {
			t.Fatal(stderr)
		}
		sameFiles(t, out, offline)
	})
}

// TestLiveSpool: a source faster than the clustering and a small buffer:
// the bytes beyond it go to the spool and come back in order; the spool
// is removed. Without a spool the source waits. Either way nothing is
// lost.
func TestLiveSpool(t *testing.T) {
	dir := t.TempDir()
	_, offline := liveFile(t, dir, ".csv")
	spool := filepath.Join(dir, "spool")
	os.Mkdir(spool, 0o755)
	for _, tc := range []struct {
		name string
		args []string
		says *regexp.Regexp
	}{
		{"spool", []string{"--buffer", "64KiB", "--spool", spool}, regexp.MustCompile(`spooled \d`)},
		{"wait", []string{"--buffer", "64KiB"}, regexp.MustCompile(`the source waited \d`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Hits to Parquet are slow to write: the source runs ahead.
			out := filepath.Join(dir, tc.name+".csv")
			args := append([]string{"cluster", "-q", "--mode", "sequential", "--hits", filepath.Join(dir, tc.name+"-hits.parquet"), "-o", out}, tc.args...)
			code, _, stderr := hitflow(t, append(args, serveLive(t, liveSim, 0))...)
			if code != 0 {
				t.Fatal(stderr)
			}
			sameFiles(t, out, offline)
			if !tc.says.MatchString(stderr) {
				t.Errorf("summary does not say %v: %s", tc.says, stderr)
			}
			if files, _ := os.ReadDir(spool); len(files) != 0 {
				t.Errorf("spool files left: %v", files)
			}
		})
	}
}

// TestRotate: rotated outputs are complete files whose clusters, in
// order, are those of one output, ids and hits included.
func TestRotate(t *testing.T) {
	dir := t.TempDir()
	// Small clusters, many of them: the Parquet and Arrow writers grow
	// their files a row group (65536 clusters) at a time.
	raw := filepath.Join(dir, "gamma.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "400000", "-q", "-o", raw); code != 0 {
		t.Fatal(stderr)
	}
	offline := filepath.Join(dir, "offline.parquet")
	if code, _, stderr := hitflow(t, "cluster", "-q", "-o", offline, raw); code != 0 {
		t.Fatal(stderr)
	}
	want, err := format.ReadClusters(offline)
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".parquet", ".csv", ".root", ".arrow", ".clog"} {
		t.Run(ext, func(t *testing.T) {
			out := filepath.Join(dir, "part"+ext)
			code, _, stderr := hitflow(t, "cluster", "-q", "--rotate", "1MiB", "--hits", filepath.Join(dir, "hits.csv"), "-o", out, raw)
			if code != 0 {
				t.Fatal(stderr)
			}
			parts, _ := filepath.Glob(filepath.Join(dir, "part-*"+ext))
			hitParts, _ := filepath.Glob(filepath.Join(dir, "hits-*.csv"))
			if len(parts) < 3 || len(hitParts) != len(parts) || !strings.Contains(stderr, "wrote "+plural(len(parts), "part")) {
				t.Fatalf("%d parts, %d hit parts: %s", len(parts), len(hitParts), stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written besides its parts", out)
			}
			var ids []int64
			var hits int
			for i, p := range parts {
				if p != filepath.Join(dir, online.PartName("part"+ext, i+1)) {
					t.Fatalf("part %d is %s", i+1, p)
				}
				switch ext {
				case ".arrow": // not read back by hitflow: written for pyarrow and polars
					ids = append(ids, arrowIDs(t, p)...)
				case ".clog": // no ids
				default:
					c, err := format.ReadClusters(p)
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, c.ID...)
				}
				l, err := format.ReadHits(hitParts[i])
				if err != nil {
					t.Fatal(err)
				}
				hits += l.Hits.Len()
				os.Remove(p)
				os.Remove(hitParts[i])
			}
			if ext != ".clog" && !slices.Equal(ids, want.ID) {
				t.Errorf("%d clusters in the parts, %d in one file, or in another order", len(ids), want.Len())
			}
			if hits != 400_000 {
				t.Errorf("%d hits in the hit parts, want 400000", hits)
			}
		})
	}
	// A later part named like an input: the run stops before it, the
	// input untouched.
	victim := filepath.Join(dir, "hits-0002.csv")
	if code, _, stderr := hitflow(t, "cluster", "-q", "--hits", filepath.Join(dir, "hits.csv"), "-o", filepath.Join(dir, "cut.csv"), raw); code != 0 {
		t.Fatal(stderr)
	}
	os.Rename(filepath.Join(dir, "hits.csv"), victim)
	before, _ := os.ReadFile(victim)
	code, _, stderr := hitflow(t, "cluster", "-q", "--rotate", "1MiB", "--hits", filepath.Join(dir, "hits.csv"), "-o", filepath.Join(dir, "again.csv"), victim)
	if after, _ := os.ReadFile(victim); code == 0 || !bytes.Equal(before, after) || !strings.Contains(stderr, "hits-0002.csv") {
		t.Errorf("rotating into an input's name: exit %d, input kept %v: %s", code, bytes.Equal(before, after), stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "--rotate", "10m", "-o", "-", raw); code != exitUsage {
		t.Errorf("--rotate to stdout: exit %d: %s", code, stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "--rotate", "soon", "-o", "x.csv", raw); code != exitUsage || !strings.Contains(stderr, "soon") {
		t.Errorf("--rotate soon: exit %d: %s", code, stderr)
	}
}

// arrowIDs reads the cluster ids of an Arrow IPC file.
func arrowIDs(t *testing.T, name string) []int64 {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []int64
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		ids = appendIDs(ids, rec)
	}
	return ids
}

// appendIDs appends the first column, the cluster ids, of a batch.
func appendIDs(ids []int64, rec arrow.RecordBatch) []int64 {
	return append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
}

// TestArrowStdout: -o -.arrow streams record batches that an Arrow
// stream reader takes; the clusters are those of the file.
func TestArrowStdout(t *testing.T) {
	dir := t.TempDir()
	_, offline := liveFile(t, dir, ".parquet")
	want, err := format.ReadClusters(offline)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := hitflow(t, "cluster", "-q", "-o", "-.arrow", serveLive(t, liveSim, 0))
	if code != 0 {
		t.Fatal(stderr)
	}
	r, err := ipc.NewReader(strings.NewReader(stdout))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var ids []int64
	for r.Next() {
		ids = appendIDs(ids, r.RecordBatch())
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if !slices.Equal(ids, want.ID) {
		t.Errorf("%d clusters streamed, %d in the file", len(ids), want.Len())
	}
	for _, name := range []string{"-.parquet", "-.root"} {
		if code, _, stderr := hitflow(t, "cluster", "-o", name, "--hits", "/dev/null"); code != exitUsage || !strings.Contains(stderr, "readable only once complete") {
			t.Errorf("-o %s: exit %d: %s", name, code, stderr)
		}
	}
}

// TestLiveUsage: the live flags refuse what they cannot do.
func TestLiveUsage(t *testing.T) {
	for _, args := range [][]string{
		{"tcp://127.0.0.1:1", "other.tpx3"},
		{"--follow", "a.tpx3", "b.tpx3"},
		{"--follow", "tcp://127.0.0.1:1"},
		{"--reconnect", "-"},
		{"--spool", os.TempDir(), "a.tpx3"},
		{"--buffer", "lots", "-"},
		{"--latency", "0s", "-"},
	} {
		code, _, stderr := hitflow(t, append([]string{"cluster", "-o", os.DevNull}, args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	// Nothing listening: a runtime error naming the address.
	code, _, stderr := hitflow(t, "cluster", "-o", os.DevNull, "tcp://127.0.0.1:1")
	if code != exitRuntime || !strings.Contains(stderr, "tcp://127.0.0.1:1") {
		t.Errorf("no server: exit %d: %s", code, stderr)
	}
}

// TestMetrics: --metrics serves the run's counters while it goes.
func TestMetrics(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	slow := liveSim
	slow.RateMHz, slow.Hits = 0.2, 100_000_000
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"cluster", "-q", "--metrics", addr, "-o", filepath.Join(t.TempDir(), "c.csv"), serveLive(t, slow, 1)}, nil, io.Discard, &errb)
	}()
	var body string
	waitFor(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return regexp.MustCompile(`(?m)^hitflow_clusters_total [1-9]`).MatchString(body)
	})
	for _, name := range []string{"hitflow_hits_total", "hitflow_bytes_buffered", "hitflow_cluster_latency_seconds_bucket", "hitflow_reconnects_total", "hitflow_late_hits_total", "hitflow_lag_seconds"} {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("no %s in the metrics:\n%s", name, body)
		}
	}
	// A stop (the first signal) ends the input; the run ends well.
	cancel()
	if code := <-done; code != exitOK || !strings.Contains(errb.String(), "everything received was clustered") {
		t.Errorf("after the stop: exit %d: %s", code, errb.String())
	}
}

// TestLiveSignals runs hitflow as a process on a live stream: the first
// SIGINT stops the input and the run ends with everything received
// clustered, exit 0; a second one stops it at once, the outputs
// complete, exit 130.
func TestLiveSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hitflow as a process")
	}
	dir := t.TempDir()
	backlog := filepath.Join(dir, "backlog.tpx3")
	const backlogHits = 8_000_000 // more than the run clusters before the second signal
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "pion45", "--hits", fmt.Sprint(backlogHits), "-q", "-o", backlog); code != 0 {
		t.Fatal(stderr)
	}
	for _, signals := range []int{1, 2} {
		t.Run(plural(signals, "signal"), func(t *testing.T) {
			out := filepath.Join(dir, "c.root")                 // slow to write
			input, sent := "-", func() int64 { return 1 << 16 } // standard input: all there at once
			if signals == 1 {
				sim := liveSim
				sim.Hits, sim.RateMHz = 3_000_000, 1
				input, sent = serveLiveCounted(t, sim, 1)
			}
			cmd := exec.Command(os.Args[0], "cluster", "-q", "-o", out, input)
			cmd.Env = append(os.Environ(), "HITFLOW_TEST_MAIN=1")
			// Standard input from a file arrives at once: the backlog
			// that a second signal cuts short.
			f, err := os.Open(backlog)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.Stdin = f
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Stopped once it has data, however slow the machine.
			time.Sleep(700 * time.Millisecond)
			for deadline := time.Now().Add(time.Minute); sent() < 1<<16 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			// Signals apart, as a user's: two SIGINTs pending at once
			// are one.
			for range signals {
				cmd.Process.Signal(syscall.SIGINT)
				time.Sleep(50 * time.Millisecond)
			}
			err = cmd.Wait()
			status := 0
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				status = ee.ExitCode()
			}
			want := map[int]int{1: 0, 2: 130}[signals]
			if status != want {
				t.Fatalf("exit %d, want %d: %s", status, want, stderr.String())
			}
			c, err := format.ReadClusters(out)
			if err != nil || c.Len() == 0 {
				t.Fatalf("output: %v clusters, %v", c, err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".*.part")); len(m) != 0 {
				t.Fatalf("left behind: %v", m)
			}
			says := map[int]string{1: "everything received was clustered", 2: "the clusters of the hits read so far were written"}[signals]
			if !strings.Contains(stderr.String(), says) {
				t.Errorf("stderr does not say %q: %s", says, stderr.String())
			}
			if signals == 2 && c.Len() >= backlogHits/23 {
				t.Errorf("%d clusters: the whole backlog, not cut short", c.Len())
			}
		})
	}
}

// TestLiveCutShort: a readout that closes the connection inside a chunk:
// the run writes the clusters of everything before and fails naming the
// byte where the stream ended inside a chunk.
func TestLiveCutShort(t *testing.T) {
	dir := t.TempDir()
	raw, _ := liveFile(t, dir, ".csv")
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	const cut = 300_000 // inside the fifth chunk (65,536 bytes each)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Write(data[:cut])
		c.Close()
	}()
	out := filepath.Join(dir, "cut.csv")
	code, _, stderr := hitflow(t, "cluster", "-q", "-o", out, "tcp://"+l.Addr().String())
	if code != exitRuntime || !strings.Contains(stderr, "byte 300000: chunk truncated") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c, err := format.ReadClusters(out)
	if err != nil || c.Len() == 0 {
		t.Fatalf("%v clusters, %v", c, err)
	}
	if !strings.Contains(stderr, "hits read 37495,") { // 4 chunks of 8191 and the 4,731 whole packets of the cut one
		t.Errorf("summary: %s", stderr)
	}
}

func TestStatusLine(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	s := online.Receive(context.Background(), "pipe", pr, online.Options{})
	defer s.Close()
	m := online.NewMonitor(s)
	m.Counters.Hits.Store(2_000_000)
	m.Counters.Clusters.Store(800_000)
	m.Counters.Late.Store(3)
	pw.Write(make([]byte, 3<<20))
	waitFor(t, func() bool { return s.Buffered() == 3<<20 })
	line := m.Status()
	if !regexp.MustCompile(`^\d+\.\d Mhit/s in, \d+ kcluster/s out, buffered 3\.0 MiB, spooled 0 B, lag \d.*, late hits 3$`).MatchString(line) {
		t.Errorf("status line %q", line)
	}
}
