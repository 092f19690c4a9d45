package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitflow/hitflow/format/text"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// simulateTPX3 writes a simulated run as .tpx3 bytes.
func simulateTPX3(t *testing.T, dataset string, n int, disorder pixel.Time) []byte {
	t.Helper()
	d, err := pixelsim.DatasetByName(dataset)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := tpx3.NewHitWriter(&buf, tpx3.TPX3)
	if err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: n, Seed: 7, RateMHz: 20, Disorder: disorder}, w.Write); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type result struct {
	sum      Summary
	err      error
	clusters string
	hits     string
}

func run(t *testing.T, ctx context.Context, unsorted pixel.Time, def pixel.Definition, data ...[]byte) result {
	t.Helper()
	return runMode(t, ctx, unsorted, def, pixel.Sequential, 1, data...)
}

func runMode(t *testing.T, ctx context.Context, unsorted pixel.Time, def pixel.Definition, mode pixel.Mode, workers int, data ...[]byte) result {
	t.Helper()
	return runWith(t, ctx, nil, unsorted, def, mode, workers, data...)
}

// runWith is runMode with the job changed by edit first.
func runWith(t *testing.T, ctx context.Context, edit func(*Job), unsorted pixel.Time, def pixel.Definition, mode pixel.Mode, workers int, data ...[]byte) result {
	t.Helper()
	var cbuf, hbuf bytes.Buffer
	cw, _ := text.NewClusterCSV(&cbuf, text.Columns{})
	hw := tpx3.NewCSVWriter(&hbuf, true)
	layout, _ := tpx3.LayoutByName("single")
	job := Job{
		Reader:   tpx3.Options{Layout: layout},
		Unsorted: unsorted,
		Cluster:  pixel.Config{Definition: def, Dt: 200 * pixel.Nanosecond, Width: 256, Height: 256},
		Clusters: cw,
		Hits:     hw,
		Mode:     mode,
		Workers:  workers,
	}
	for i, d := range data {
		job.Sources = append(job.Sources, Source{Name: []string{"a.tpx3", "b.tpx3"}[i], R: bytes.NewReader(d)})
	}
	if edit != nil {
		edit(&job)
	}
	sum, err := Run(ctx, job)
	cw.Close()
	hw.Close()
	return result{sum, err, cbuf.String(), hbuf.String()}
}

// partition turns a labelled-hits CSV into a canonical text: each cluster
// as its sorted hit lines, clusters sorted. Equal-time hits may arrive in
// another order, which may renumber clusters with equal first ToA; the
// partition must not change.
func partition(hitsCSV string) string {
	groups := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(hitsCSV), "\n")[1:] {
		i := strings.LastIndexByte(line, ',')
		groups[line[i+1:]] = append(groups[line[i+1:]], line[:i])
	}
	var clusters []string
	for _, g := range groups {
		slices.Sort(g)
		clusters = append(clusters, strings.Join(g, ";"))
	}
	slices.Sort(clusters)
	return strings.Join(clusters, "\n")
}

// TestSorterMakesOrderIrrelevant: a disordered readout of the same hits,
// sorted by the pipeline, gives the same clusters as the ordered one.
func TestSorterMakesOrderIrrelevant(t *testing.T) {
	for _, def := range []pixel.Definition{pixel.Local, pixel.Global, pixel.Window} {
		ordered := run(t, context.Background(), 0, def, simulateTPX3(t, "pion45", 200000, 0))
		mixed := run(t, context.Background(), 60*pixel.Microsecond, def, simulateTPX3(t, "pion45", 200000, 50*pixel.Microsecond))
		if ordered.err != nil || mixed.err != nil {
			t.Fatal(ordered.err, mixed.err)
		}
		if strings.Count(ordered.clusters, "\n") != strings.Count(mixed.clusters, "\n") || partition(ordered.hits) != partition(mixed.hits) {
			t.Fatalf("%v: disordered input clustered differently", def)
		}
		if s := mixed.sum; s.Hits != 200000 || s.Late != 0 || s.Clusters == 0 || s.Files != 1 {
			t.Fatalf("summary %+v", s)
		}
		if n := strings.Count(mixed.hits, "\n") - 1; n != 200000 {
			t.Fatalf("%d labelled hits", n)
		}
	}
}

// TestSorterKeepsEnergies: calibrated hits keep their energies through the
// sorter, so a disordered readout gives the same clusters, energy sums
// included, as the ordered one. (The sorter's merge used to zero the
// energies of the hits it had placed before a batch's run.)
func TestSorterKeepsEnergies(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"a": "1.9", "b": "36", "c": "55", "t": "2.8"} {
		row := strings.Repeat(v+" ", 255) + v + "\n"
		if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(strings.Repeat(row, 256)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clusters := func(unsorted, disorder pixel.Time) []string {
		cal, err := tpx3.LoadCalibration(dir)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		cw, _ := text.NewClusterCSV(&buf, text.Columns{})
		layout, _ := tpx3.LayoutByName("single")
		_, err = Run(context.Background(), Job{
			Sources:  []Source{{Name: "a.tpx3", R: bytes.NewReader(simulateTPX3(t, "gamma", 200000, disorder))}},
			Reader:   tpx3.Options{Layout: layout},
			Unsorted: unsorted, Calibration: cal, Cluster: pixel.DefaultConfig(), Clusters: cw,
		})
		cw.Close()
		if err != nil {
			t.Fatal(err)
		}
		// Without the ids: clusters with equal first times may swap.
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")[1:]
		for i, l := range lines {
			lines[i] = l[strings.IndexByte(l, ',')+1:]
		}
		slices.Sort(lines)
		return lines
	}
	ordered, mixed := clusters(0, 0), clusters(60*pixel.Microsecond, 50*pixel.Microsecond)
	if !slices.Equal(ordered, mixed) {
		t.Fatalf("the disordered readout gave other clusters (%d, %d)", len(mixed), len(ordered))
	}
	for _, l := range ordered {
		if f := strings.Split(l, ","); f[4] == "0" { // energy_kev
			t.Fatalf("a cluster without energy: %s", l)
		}
	}
}

func TestLateHitsCounted(t *testing.T) {
	r := run(t, context.Background(), pixel.Microsecond, pixel.Local, simulateTPX3(t, "gamma", 100000, 50*pixel.Microsecond))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.Late == 0 || r.sum.Hits != 100000 || strings.Count(r.hits, "\n")-1 != 100000 {
		t.Fatalf("summary %+v", r.sum)
	}
}

// TestClockResetBetweenFiles: the same run given twice (its clock starts
// again) is clustered twice the same way, in every mode, through the
// sorter: one restart, no late hit.
func TestClockResetBetweenFiles(t *testing.T) {
	data := simulateTPX3(t, "gamma", 300000, 50*pixel.Microsecond) // 15 ms, beyond the restart gap
	once := run(t, context.Background(), 60*pixel.Microsecond, pixel.Local, data)
	for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked} {
		r := runMode(t, context.Background(), 60*pixel.Microsecond, pixel.Local, mode, 2, data, data)
		if r.err != nil || once.err != nil {
			t.Fatal(r.err, once.err)
		}
		if s := r.sum; s.Restarts != 1 || s.Late != 0 || s.Hits != 600000 || s.Clusters != 2*once.sum.Clusters {
			t.Fatalf("%v: summary %+v, once %+v", mode, s, once.sum)
		}
		rows := strings.Split(strings.TrimSpace(r.clusters), "\n")[1:]
		want := strings.Split(strings.TrimSpace(once.clusters), "\n")[1:]
		for i, row := range rows {
			w := want[i%len(want)]
			if row[strings.IndexByte(row, ','):] != w[strings.IndexByte(w, ','):] {
				t.Fatalf("%v: cluster %d is %q, want %q", mode, i, row, w)
			}
		}
	}
}

// TestSplitSources: a run split into two files at a chunk boundary is one
// stream.
func TestSplitSources(t *testing.T) {
	data := simulateTPX3(t, "pb0", 100000, 0)
	cut := 0
	for cut < len(data)/2 {
		cut += 8 + int(binary.LittleEndian.Uint16(data[cut+6:]))
	}
	whole := run(t, context.Background(), 0, pixel.Global, data)
	split := run(t, context.Background(), 0, pixel.Global, data[:cut], data[cut:])
	if whole.err != nil || split.err != nil || whole.clusters != split.clusters || split.sum.Files != 2 {
		t.Fatalf("split run differs: %v %v", whole.err, split.err)
	}
}

// TestErrorKeepsWork: a truncated file gives an error naming the file and
// offset, and every hit decoded before it is clustered and written, with
// the sorting stage or without.
func TestErrorKeepsWork(t *testing.T) {
	data := simulateTPX3(t, "gamma", 50000, 0)
	for _, unsorted := range []pixel.Time{0, 100 * pixel.Microsecond} {
		r := run(t, context.Background(), unsorted, pixel.Local, data[:len(data)-5])
		if r.err == nil || !strings.Contains(r.err.Error(), "a.tpx3: byte ") || !strings.Contains(r.err.Error(), "truncated") {
			t.Fatalf("error %v", r.err)
		}
		hits := strings.Count(r.hits, "\n") - 1
		if int64(hits) != r.sum.Hits || hits < 40000 || r.sum.Clusters == 0 {
			t.Fatalf("unsorted %v: %d hits written, summary %+v", unsorted, hits, r.sum)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, unsorted := range []pixel.Time{0, 100 * pixel.Microsecond} {
		r := run(t, ctx, unsorted, pixel.Local, simulateTPX3(t, "gamma", 1000, 0))
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("error %v", r.err)
		}
		if !strings.HasPrefix(r.clusters, text.ClusterCSVHeader) {
			t.Fatal("writers not flushed on cancel")
		}
	}
}

// cancellingWriter cancels the run at its first batch and goes on writing,
// slowly: the queues fill up behind it.
type cancellingWriter struct {
	ClusterSink
	cancel func()
	writes int
}

func (c *cancellingWriter) Write(cl *pixel.Clusters) error {
	if c.writes++; c.writes == 1 {
		c.cancel()
	}
	time.Sleep(time.Millisecond)
	return c.ClusterSink.Write(cl)
}

// TestCancelMidRun: cancelled while every stage is busy, a run stops early
// and still writes the clusters of every hit it read, in every mode, and
// leaves no goroutine behind.
func TestCancelMidRun(t *testing.T) {
	// More batches than the queues and the lanes' windows hold.
	data := simulateTPX3(t, "gamma", 3000000, 50*pixel.Microsecond)
	layout, _ := tpx3.LayoutByName("single")
	before := runtime.NumGoroutine()
	for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked, pixel.Auto} {
		ctx, cancel := context.WithCancel(context.Background())
		var cbuf, hbuf bytes.Buffer
		cw, _ := text.NewClusterCSV(&cbuf, text.Columns{})
		hw := tpx3.NewCSVWriter(&hbuf, true)
		job := Job{Reader: tpx3.Options{Layout: layout}, Unsorted: 100 * pixel.Microsecond, Cluster: pixel.DefaultConfig(),
			Mode: mode, Workers: 2, Clusters: &cancellingWriter{ClusterSink: cw, cancel: cancel}, Hits: hw,
			Sources: []Source{{Name: "a.tpx3", R: bytes.NewReader(data)}}}
		sum, err := Run(ctx, job)
		cw.Close()
		hw.Close()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v: error %v", mode, err)
		}
		hits, clusters := strings.Count(hbuf.String(), "\n")-1, strings.Count(cbuf.String(), "\n")-1
		if int64(hits) != sum.Hits || sum.Hits >= 3000000 || int64(clusters) != sum.Clusters || sum.Clusters == 0 {
			t.Fatalf("%v: %d hits and %d clusters written, summary %+v", mode, hits, clusters, sum)
		}
		if err := settled(before); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
	}
}

func TestSummaryLine(t *testing.T) {
	s := Summary{Files: 2, Hits: 3000000, Clusters: 1000, Late: 3, InvalidEnergy: 4, OutOfRange: 5, Elapsed: 1500000000}
	want := "hits read 3000000, clusters 1000, late hits 3, invalid hits 4, out of range 5, 2.0 Mhit/s (2 files, 1.500 s)"
	if s.String() != want {
		t.Fatalf("%q", s.String())
	}
	s.Chosen = pixel.LanesMode
	if s.String() != strings.Replace(want, " s)", " s, auto: lanes)", 1) {
		t.Fatalf("%q", s.String())
	}
	s.Chosen = pixel.Auto
	s.OutsideCalib, s.CalibSize = 3, "3x1"
	if got, want := s.String(), want+", 3 invalid hits beyond the 3x1 calibration"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	s.OutsideCalib = 0
	for _, c := range []struct {
		files, streams int
		want           string
	}{{0, 0, "0 files"}, {1, 0, "1 file"}, {1, 1, "1 stream"}, {3, 1, "2 files, 1 stream"}, {2, 2, "2 streams"}} {
		s.Files, s.Streams = c.files, c.streams
		if got, want := s.String(), strings.Replace(want, "2 files", c.want, 1); got != want {
			t.Errorf("%d files, %d streams: %q, want %q", c.files, c.streams, got, want)
		}
	}
}

// TestModesIdentical runs every mode with several worker counts on the same
// disordered input: the cluster and hit files must be byte-identical.
func TestModesIdentical(t *testing.T) {
	data := [][]byte{simulateTPX3(t, "pion45", 300000, 50*pixel.Microsecond), simulateTPX3(t, "pb50", 300000, 0)}
	for _, d := range data {
		for _, def := range []pixel.Definition{pixel.Local, pixel.Global, pixel.Window} {
			want := runMode(t, context.Background(), 100*pixel.Microsecond, def, pixel.Sequential, 1, d)
			if want.err != nil || want.sum.Clusters < 1000 {
				t.Fatalf("sequential: %v, %+v", want.err, want.sum)
			}
			for _, mode := range []pixel.Mode{pixel.LanesMode, pixel.Chunked, pixel.Auto} {
				for _, workers := range []int{1, 2, 3} {
					got := runMode(t, context.Background(), 100*pixel.Microsecond, def, mode, workers, d)
					if got.err != nil || got.clusters != want.clusters || got.hits != want.hits || got.sum.Clusters != want.sum.Clusters {
						t.Fatalf("%v, %v, %d workers: output differs from sequential (error %v, %d clusters, want %d)",
							def, mode, workers, got.err, got.sum.Clusters, want.sum.Clusters)
					}
					// Too few hits for auto's trials: it stays sequential.
					chosen := pixel.Auto
					if mode == pixel.Auto && workers > 1 {
						chosen = pixel.Sequential
					}
					if got.sum.Chosen != chosen {
						t.Fatalf("%v, %d workers: auto chose %v, want %v", mode, workers, got.sum.Chosen, chosen)
					}
				}
			}
		}
	}
}

// slowWriter makes every write wait, so that the reader must wait for it.
type slowWriter struct {
	ClusterSink
	writes int
}

func (s *slowWriter) Write(c *pixel.Clusters) error {
	s.writes++
	time.Sleep(time.Millisecond)
	return s.ClusterSink.Write(c)
}

// TestSlowWriter checks that a slow writer, which every other stage waits
// for, loses nothing.
func TestSlowWriter(t *testing.T) {
	data := simulateTPX3(t, "gamma", 600000, 0)
	want := run(t, context.Background(), 0, pixel.Local, data)
	var cbuf bytes.Buffer
	cw, _ := text.NewClusterCSV(&cbuf, text.Columns{})
	sw := &slowWriter{ClusterSink: cw}
	layout, _ := tpx3.LayoutByName("single")
	job := Job{Reader: tpx3.Options{Layout: layout}, Cluster: pixel.DefaultConfig(), Clusters: sw,
		Sources: []Source{{Name: "a.tpx3", R: bytes.NewReader(data)}}, Unsorted: 100 * pixel.Microsecond}
	sum, err := Run(context.Background(), job)
	cw.Close()
	if err != nil || cbuf.String() != want.clusters || sum.Clusters != want.sum.Clusters || sw.writes < 2 {
		t.Fatalf("error %v, %d clusters, want %d, %d writes", err, sum.Clusters, want.sum.Clusters, sw.writes)
	}
}

// TestMemberLimitStopsRun: with the hits of each cluster written, a pixel
// firing faster than dt makes a cluster that never ends; past the member
// limit the run stops reading, in every mode, names the pixel, and writes
// the clusters and hits of everything it read.
func TestMemberLimitStopsRun(t *testing.T) {
	const n = 600_000 // several times the batches in the queues
	raw := hotPixelRun(t, n, true)
	for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked} {
		res := runHot(t, raw, mode, nil)
		sum, err, hbuf, cbuf := res.sum, res.err, res.hits, res.clusters
		var e *pixel.MemberLimitError
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "clustering stopped after ") || e.X != 5 || e.Y != 6 {
			t.Fatalf("%v: error %v", mode, err)
		}
		hits, clusters := strings.Count(hbuf, "\n")-1, strings.Count(cbuf, "\n")-1
		// The lanes report once the lane holding the cluster has gone on
		// into the next window: after the windows in flight, which hold
		// this whole file.
		early := sum.Hits < n || mode == pixel.LanesMode
		if int64(hits) != sum.Hits || !early || int64(clusters) != sum.Clusters || sum.Clusters == 0 {
			t.Fatalf("%v: %d hits and %d clusters written, summary %+v", mode, hits, clusters, sum)
		}
	}
}

// TestMaskDropsHotPixel: with the hot pixel of TestMemberLimitStopsRun
// masked, the run goes through in every mode, counts the hits it dropped,
// and writes what the run without those hits writes.
func TestMaskDropsHotPixel(t *testing.T) {
	const n = 600_000
	raw, cold := hotPixelRun(t, n, true), hotPixelRun(t, n, false)
	mask, _ := pixel.NewMask(256, 256)
	mask.Set(5, 6)
	mask.Set(0, 0) // a pixel without hits
	want := runHot(t, cold, pixel.Sequential, nil)
	if want.err != nil || want.sum.Clusters != n/10 || want.sum.Masked != 0 {
		t.Fatalf("without the hot pixel: %v, %+v", want.err, want.sum)
	}
	for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked} {
		got := runHot(t, raw, mode, mask)
		if got.err != nil || got.clusters != want.clusters || got.hits != want.hits {
			t.Fatalf("%v: error %v, output differs from the run without the hot pixel", mode, got.err)
		}
		s := got.sum
		if s.Hits != n || s.Masked != n-n/10 || s.MaskedPixels != 2 || s.Clusters != n/10 ||
			!strings.Contains(s.String(), fmt.Sprintf(", masked %d hits on 2 pixels", n-n/10)) {
			t.Fatalf("%v: summary %+v: %s", mode, s, s)
		}
	}
}

// hotPixelRun is n hits as .tpx3: nine in ten on pixel (5, 6), 200 ns
// apart, which with a dt of a microsecond never ends, unless hot is false;
// and one in ten a one-hit cluster elsewhere.
func hotPixelRun(t *testing.T, n int, hot bool) []byte {
	t.Helper()
	var h pixel.Hits
	for i := range n {
		x, y := uint16(5), uint16(6)
		if i%10 == 0 {
			x, y = uint16(100+i%50), 200 // one-hit clusters held back behind it
		} else if !hot {
			continue
		}
		h.Append(x, y, pixel.Time(i)*200*pixel.Nanosecond, 3)
	}
	var raw bytes.Buffer
	w, _ := tpx3.NewHitWriter(&raw, tpx3.TPX3)
	if err := w.Write(&h); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return raw.Bytes()
}

// runHot clusters a hotPixelRun with a dt of a microsecond and a member
// limit of 1000 hits, writing clusters and hits.
func runHot(t *testing.T, raw []byte, mode pixel.Mode, mask *pixel.Mask) result {
	t.Helper()
	var cbuf, hbuf bytes.Buffer
	cw, _ := text.NewClusterCSV(&cbuf, text.Columns{})
	hw := tpx3.NewCSVWriter(&hbuf, true)
	cfg := pixel.DefaultConfig()
	cfg.Dt, cfg.MemberLimit = pixel.Microsecond, 1000
	layout, _ := tpx3.LayoutByName("single")
	job := Job{Reader: tpx3.Options{Layout: layout}, Cluster: cfg, Mode: mode, Workers: 2, Clusters: cw, Hits: hw, Mask: mask,
		Sources: []Source{{Name: "hot.tpx3", R: bytes.NewReader(raw)}}}
	sum, err := Run(context.Background(), job)
	cw.Close()
	hw.Close()
	return result{sum, err, cbuf.String(), hbuf.String()}
}

// TestScan: the batches of a scan hold every hit read, in the file's
// order, less the masked ones; an error of the callback stops the scan
// and is returned.
func TestScan(t *testing.T) {
	data := simulateTPX3(t, "pion45", 300_000, 0)
	layout, _ := tpx3.LayoutByName("single")
	mask, _ := pixel.NewMask(256, 256)
	for x := range 256 {
		mask.Set(x, 7)
	}
	job := Job{Reader: tpx3.Options{Layout: layout}, Mask: mask, Sources: []Source{{Name: "a.tpx3", R: bytes.NewReader(data)}}}
	var got pixel.Hits
	sum, err := Scan(context.Background(), job, func(h *pixel.Hits) error {
		got.AppendRange(h, 0, h.Len())
		return nil
	})
	r, _ := tpx3.NewReader(bytes.NewReader(data), "a.tpx3", job.Reader)
	var want, batch pixel.Hits
	for {
		batch.Reset()
		err := r.Read(&batch)
		for i := range batch.Len() {
			if batch.Y[i] != 7 {
				want.AppendFrom(&batch, i)
			}
		}
		if err != nil {
			break
		}
	}
	if err != nil || sum.Hits != 300_000 || sum.Masked != int64(300_000-want.Len()) || sum.Masked == 0 || sum.MaskedPixels != 256 ||
		!slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) || !slices.Equal(got.ToA, want.ToA) || !slices.Equal(got.ToT, want.ToT) {
		t.Fatalf("error %v, summary %+v, %d hits, want %d", err, sum, got.Len(), want.Len())
	}
	stop := errors.New("enough")
	calls := 0
	job.Sources[0].R = bytes.NewReader(data)
	if _, err := Scan(context.Background(), job, func(*pixel.Hits) error { calls++; return stop }); err != stop || calls != 1 {
		t.Fatalf("error %v after %d calls", err, calls)
	}
}

// TestJobValidate: a job that cannot run is refused before anything is
// read, by the job itself and by Run.
func TestJobValidate(t *testing.T) {
	cw, _ := text.NewClusterCSV(io.Discard, text.Columns{})
	good := Job{Cluster: pixel.DefaultConfig(), Clusters: cw}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := pixel.DefaultConfig()
	bad.Dt = -1
	for _, j := range []Job{
		{Cluster: pixel.DefaultConfig()},
		{Cluster: pixel.DefaultConfig(), Clusters: cw, Unsorted: -1},
		{Cluster: pixel.DefaultConfig(), Clusters: cw, Workers: -1},
		{Cluster: pixel.DefaultConfig(), Clusters: cw, Mode: pixel.Chunked + 1},
		{Cluster: bad, Clusters: cw},
	} {
		if j.Validate() == nil {
			t.Errorf("%+v accepted", j)
		}
		if _, err := Run(context.Background(), j); err == nil {
			t.Errorf("Run took %+v", j)
		}
	}
}

// evenLate is a correction that moves the hits of even ToT earlier by d.
type evenLate struct{ d pixel.Time }

func (e evenLate) Correct(h *pixel.Hits) {
	for i, tot := range h.ToT {
		if tot%2 == 0 {
			h.ToA[i] -= e.d
		}
	}
}

func (e evenLate) Spread() pixel.Time { return e.d }

// TestCorrectionBeforeSorting: a corrected run gives the clusters of the
// corrected hits in time order, with no hit late, though the correction
// breaks the order.
func TestCorrectionBeforeSorting(t *testing.T) {
	corr := evenLate{150 * pixel.Nanosecond} // a multiple of the .tpx3 time grid
	d, _ := pixelsim.DatasetByName("pion45")
	var raw, fixed bytes.Buffer
	rw, _ := tpx3.NewHitWriter(&raw, tpx3.TPX3)
	var all pixel.Hits
	err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: 200000, Seed: 3, RateMHz: 20}, func(h *pixel.Hits) error {
		all.AppendRange(h, 0, h.Len())
		return rw.Write(h)
	})
	if err != nil || rw.Close() != nil {
		t.Fatal(err)
	}
	corr.Correct(&all)
	s, _ := pixel.NewSorter(corr.d, pixel.DefaultRestart)
	fw, _ := tpx3.NewHitWriter(&fixed, tpx3.TPX3)
	if err := fw.Write(s.Push(&all)); err != nil || fw.Write(s.Flush()) != nil || fw.Close() != nil {
		t.Fatal(err)
	}
	want := run(t, context.Background(), 0, pixel.Local, fixed.Bytes())
	got := runWith(t, context.Background(), func(j *Job) { j.Correction = corr }, 0, pixel.Local, pixel.Sequential, 1, raw.Bytes())
	if got.err != nil || want.err != nil {
		t.Fatal(got.err, want.err)
	}
	if got.sum.Late != 0 || got.sum.Clusters != want.sum.Clusters || got.clusters != want.clusters || got.hits != want.hits {
		t.Errorf("corrected run: %d clusters, %d late; the corrected hits in order: %d clusters", got.sum.Clusters, got.sum.Late, want.sum.Clusters)
	}
	if want.clusters == run(t, context.Background(), 0, pixel.Local, raw.Bytes()).clusters {
		t.Error("the correction changed no cluster: the test tells nothing")
	}
	tooMuch := func(j *Job) { j.Correction = evenLate{pixel.DefaultRestart} }
	if err := runWith(t, context.Background(), tooMuch, 0, pixel.Local, pixel.Sequential, 1, raw.Bytes()).err; err == nil || !strings.Contains(err.Error(), "restart gap") {
		t.Errorf("a correction spread past the restart gap: %v", err)
	}
}

// keySorter sorts keys by comparison, from its call after to on failing
// with err.
type keySorter struct {
	calls, after int
	err          error
	most         int // keys in the largest call
}

func (k *keySorter) MinKeys() int { return 1 }

func (k *keySorter) SortKeys(keys []uint64, from, _ uint, perm []int32) error {
	k.most = max(k.most, len(keys))
	if k.calls++; k.err != nil && k.calls > k.after {
		return k.err
	}
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(keys[a]>>from, keys[b]>>from) })
	return nil
}

// TestKeySorterInRun: the reorder stage's radix sorts on a key sorter
// give the host's output and are counted in the summary; a key sorter
// that fails ends the run with its error, and the hits read are still
// sorted (on the host), clustered and written. The reader's batches are
// the device's large ones.
func TestKeySorterInRun(t *testing.T) {
	data := simulateTPX3(t, "pion45", 200000, 50*pixel.Microsecond)
	want := run(t, context.Background(), 60*pixel.Microsecond, pixel.Local, data)
	if want.err != nil {
		t.Fatal(want.err)
	}
	lost := errors.New("device lost")
	for _, k := range []*keySorter{{}, {after: 1, err: lost}} {
		got := runWith(t, context.Background(), func(j *Job) { j.KeySorter = k }, 60*pixel.Microsecond, pixel.Local, pixel.Sequential, 1, data)
		if k.err == nil && (got.err != nil || got.sum.DeviceSorts != k.calls || k.calls < 2 || !strings.Contains(got.sum.String(), fmt.Sprintf(", %d batches sorted on the device", k.calls))) {
			t.Fatalf("err %v, %d of %d batches counted: %s", got.err, got.sum.DeviceSorts, k.calls, got.sum)
		}
		if k.err != nil && (!errors.Is(got.err, lost) || !strings.Contains(got.err.Error(), "the device failed sorting") || got.sum.DeviceSorts != 1) {
			t.Fatalf("a failing key sorter: %v, %d batches sorted on it", got.err, got.sum.DeviceSorts)
		}
		if k.err == nil && (got.clusters != want.clusters || got.hits != want.hits) {
			t.Fatal("another output than the host's sort gives")
		}
		if k.err == nil && k.most < deviceSortBatch {
			t.Fatalf("the device sorted at most %d keys at a time, not the %d of a batch", k.most, deviceSortBatch)
		}
		if k.err != nil && (got.sum.Hits == 0 || strings.Count(got.hits, "\n")-1 != int(got.sum.Hits)) {
			t.Fatalf("a failing key sorter: %d hits read, %d written", got.sum.Hits, strings.Count(got.hits, "\n")-1)
		}
	}
}
