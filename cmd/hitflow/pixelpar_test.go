package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestModesAndCompare clusters one file in every mode: the files written
// are identical, and compare says so, of label files in CSV, Parquet and
// Arrow; a different dt makes them differ.
func TestModesAndCompare(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "pb.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "pb50", "--hits", "200000", "--seed", "2", "--rate", "20", "--disorder", "30us", "-o", in); code != 0 {
		t.Fatal(stderr)
	}
	var want string
	for _, mode := range []string{"sequential", "lanes", "chunked"} {
		out, hits := filepath.Join(dir, mode+".csv"), filepath.Join(dir, mode+"-hits.csv")
		if mode == "lanes" {
			hits = filepath.Join(dir, mode+"-hits.parquet")
		} else if mode == "chunked" {
			hits = filepath.Join(dir, mode+"-hits.arrow")
		}
		if code, _, stderr := hitflow(t, "cluster", "--mode", mode, "--workers", "2", "--hits", hits, "-o", out, in); code != 0 {
			t.Fatalf("%s: %s", mode, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = string(b)
		} else if string(b) != want {
			t.Fatalf("%s clusters differ from sequential", mode)
		}
	}
	for _, a := range []string{"chunked-hits.arrow", "lanes-hits.parquet"} {
		code, stdout, stderr := hitflow(t, "compare", filepath.Join(dir, a), filepath.Join(dir, "sequential-hits.csv"))
		m := regexp.MustCompile(`hits 200000 \(only in A 0, only in B 0\), clusters A (\d+), B (\d+), without an identical twin A 0, B 0, IoU 1.000000 \(hit-weighted 1.000000\)`).FindStringSubmatch(stdout)
		if code != 0 || m == nil || m[1] != m[2] {
			t.Fatalf("%s: exit %d: %s%s", a, code, stdout, stderr)
		}
	}
	// As compare's example has it: the clusters to /dev/null, written as
	// nothing, the labels kept.
	wide := filepath.Join(dir, "wide-hits.csv")
	if code, _, stderr := hitflow(t, "cluster", "--dt", "2us", "--hits", wide, "-o", os.DevNull, in); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := hitflow(t, "compare", wide, filepath.Join(dir, "sequential-hits.csv"))
	if code != 1 || strings.Contains(stdout, "twin A 0") || strings.Contains(stdout, "IoU 1.000000") || !strings.Contains(stderr, "wide-hits.csv and ") {
		t.Fatalf("a wider dt: exit %d: %s%s", code, stdout, stderr)
	}
}

func TestPixelUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "--mode", "gpu"}, "unknown clustering mode"},
		{[]string{"cluster", "--workers", "-1"}, "--workers"},
		{[]string{"cluster", "--unsorted", "20ms"}, "shorter than --restart"},
		{[]string{"cluster", "--restart", "-1ms"}, "negative duration"},
		{[]string{"compare", "a.csv"}, "two label files"},
		{[]string{"cluster", "-o", "-", "--hits", "-"}, "one at a time"},
		{[]string{"cluster", "-o", "c.csv", "--hits", "-", "--tdc", "-"}, "one at a time"},
		{[]string{"bench", "pixel", "--runs", "0"}, "--runs"},
		{[]string{"bench", "pixel", "--modes", "auto"}, "--modes"},
		{[]string{"bench", "pixel", "--datasets", "muon"}, "muon"},
		{[]string{"bench", "pixel", "--e2e-hits", "-1"}, "--e2e-hits -1"},
		{[]string{"bench", "pixel", "--rate", "0"}, "--rate 0"},
		{[]string{"bench", "pixel", "--plot", "scaling.txt"}, "--plot scaling.txt: want a .png or .svg file"},
		{[]string{"bench", "pixel", "--file", "x.tpx3", "--layout", "hex"}, "hex"},
		{[]string{"clue", "--dc", "2", "--rhoc", "1", "--deltac", "2", "--deltao", "2", "--plot", "x.jpg", "missing.csv"}, "--plot x.jpg"},
	} {
		code, _, stderr := hitflow(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
	if code, _, stderr := hitflow(t, "compare", "missing-a.csv", "missing-b.csv"); code != 2 || !strings.Contains(stderr, "missing-a.csv") {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
}

// TestCompareOtherHits: files of other hits are told apart from
// disagreeing clusterings, and differ (exit 1, as diff); files without a
// hit in common have no score (exit 2, diff's trouble).
func TestCompareOtherHits(t *testing.T) {
	dir := t.TempDir()
	a, b, empty := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "empty.csv")
	for name, text := range map[string]string{
		a:     "x,y,toa_ns,tot,cluster\n1,1,5,3,0\n2,2,5,3,0\n",
		b:     "x,y,toa_ns,tot,cluster\n1,1,5,3,7\n2,2,5,3,7\n9,9,9,9,8\n",
		empty: "x,y,toa_ns,tot,cluster\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := hitflow(t, "compare", a, b)
	if code != 1 || !strings.Contains(stdout, "hits 2 (only in A 0, only in B 1), clusters A 1, B 2, without an identical twin A 0, B 1, IoU 1.000000") ||
		!strings.Contains(stderr, "do not hold the same hits (0 in "+a+" only, 1 in "+b+" only): the scores count the 2 in both") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	code, stdout, stderr = hitflow(t, "compare", empty, empty)
	if code != 2 || !strings.Contains(stdout, "IoU undefined (no hit in both files)") || !strings.Contains(stderr, "no hit in common") {
		t.Fatalf("empty: exit %d: %s%s", code, stdout, stderr)
	}
}

func TestBenchPixel(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "scaling.png")
	code, stdout, stderr := hitflow(t, "bench", "pixel", "--datasets", "gamma", "--hits", "20000", "--repeat", "2", "--runs", "1",
		"--e2e-hits", "20000", "--plot", plot)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"| gamma | 2.", "| sequential | 1 |", "| lanes | 1 |", "| chunked | 1 |", "End to end",
		"pion45.tpx3", "| .parquet | sequential | 1 | 20000 |", "| .arrow | sequential | 1 | 20000 |", "| .arrow | lanes |", "| .arrow | auto |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	// The clusters per run are equal across modes and worker counts.
	var counts []string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Split(line, " | "); strings.HasPrefix(line, "| gamma |") {
			counts = append(counts, f[len(f)-1])
		}
	}
	if len(counts) < 3 || strings.Count(strings.Join(counts, ""), counts[0]) != len(counts) {
		t.Errorf("cluster counts %q", counts)
	}
	// Every end-to-end row says how busy the cores were and how much
	// memory its runs took.
	rows := 0
	for _, line := range strings.Split(stdout, "\n") {
		if !strings.Contains(line, ".tpx3 (") {
			continue
		}
		rows++
		f := strings.Split(strings.Trim(line, "| "), " | ")
		if mb, err := strconv.Atoi(f[len(f)-1]); len(f) != 10 || err != nil || mb < 0 || mb > 1000 {
			t.Errorf("end-to-end row %q: no memory", line)
		}
		// A run keeps at least a core busy now and then, and cannot use
		// more than all of them (with slack for the clock's granularity).
		if busy, err := strconv.Atoi(f[8]); err != nil || busy < 5 || busy > 100*runtime.GOMAXPROCS(0)+20 {
			t.Errorf("end-to-end row %q: CPU %q", line, f[8])
		}
		if f[5] != "0" {
			t.Errorf("end-to-end row %q: hits out of range", line)
		}
	}
	if rows != 16 || !strings.Contains(stdout, "| CPU % | memory MB |") {
		t.Errorf("%d end-to-end rows", rows)
	}
	if fi, err := os.Stat(plot); err != nil || fi.Size() < 1000 {
		t.Fatalf("plot: %v", err)
	}
}

// TestBenchPixelFile: --file is read as cluster reads it, with its chip
// layout (the four-chip background run of ../shared/data: all its hits
// clustered with the default row layout, nearly all out of range as one
// chip, and said so), and a file that cannot be read fails before the
// clustering runs.
func TestBenchPixelFile(t *testing.T) {
	const real = "../../../shared/data/tpx3/suann_socket_background_serval32.tpx3"
	if _, err := os.Stat(real); err != nil {
		t.Skipf("no shared data: %v", err)
	}
	args := []string{"bench", "pixel", "--datasets", "gamma", "--hits", "2000", "--repeat", "1", "--runs", "1", "--modes", "sequential", "--file", real}
	code, stdout, stderr := hitflow(t, args...)
	if code != 0 || !strings.Contains(stdout, "| .arrow | sequential | 1 | 98548 | 0 | 89371 |") || strings.Contains(stderr, "not clustered") {
		t.Fatalf("row layout: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = hitflow(t, append(args, "--layout", "single")...)
	if code != 0 || !strings.Contains(stdout, "| .arrow | sequential | 1 | 98548 | 96207 | 128 |") ||
		!strings.Contains(stderr, "96207 hits outside the 256x256 sensor were not clustered") {
		t.Fatalf("single layout: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, bad := range [][]string{{"--file", filepath.Join(t.TempDir(), "missing.tpx3")}, {"--file", real, "--format", "csv"}} {
		code, stdout, stderr = hitflow(t, append(args[:len(args)-2], bad...)...)
		if code != 1 || !strings.Contains(stderr, bad[1]) || strings.Contains(stdout, "| gamma |") {
			t.Errorf("%v: exit %d, clustered first: %v\n%s", bad, code, strings.Contains(stdout, "| gamma |"), stderr)
		}
	}
}

// TestRestartsReported: files given twice restart the clock once, quietly;
// an input in pixel order restarts it all the time, and the user is told.
func TestRestartsReported(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "g.csv")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "gamma", "--hits", "50000", "--seed", "2", "--rate", "0.5", "-o", in); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	for _, gap := range []string{"10ms", "0"} { // 0: the default
		code, _, stderr := hitflow(t, "cluster", "-q", "--restart", gap, "-o", filepath.Join(dir, "c.csv"), in, in)
		if code != 0 || !strings.Contains(stderr, "time restarts 1\n") || strings.Contains(stderr, "sorted by time") {
			t.Fatalf("twice, --restart %s: exit %d: %s", gap, code, stderr)
		}
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	rows := lines[1:]
	slices.Sort(rows) // by pixel, as text
	byPixel := filepath.Join(dir, "pixel-order.csv")
	if err := os.WriteFile(byPixel, []byte(lines[0]+"\n"+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := hitflow(t, "cluster", "-q", "-o", filepath.Join(dir, "p.csv"), byPixel)
	if code != 0 || !strings.Contains(stderr, "sorted by time") || !strings.Contains(stderr, "hitflow: warning: the time went back by more than --restart 16341 times") {
		t.Fatalf("pixel order: exit %d: %s", code, stderr)
	}
}

// TestOutOfRangeWarned: hits beyond the sensor are counted and the user is
// told which flags set its size; with the right size, nothing is said.
func TestOutOfRangeWarned(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "quad.csv")
	if err := os.WriteFile(in, []byte("x,y,toa_ns,tot\n10,10,100,5\n10,300,200,5\n11,301,210,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := hitflow(t, "cluster", "-q", "-o", filepath.Join(dir, "c.csv"), in)
	if code != 0 || !strings.Contains(stderr, "out of range 2,") || !strings.Contains(stderr, "--sensor") ||
		!strings.Contains(stderr, "hitflow: warning: 2 hits outside the 1027x256 sensor (--layout row) were not clustered") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = hitflow(t, "cluster", "-q", "--sensor", "512x512", "-o", filepath.Join(dir, "c.csv"), in)
	if code != 0 || !strings.Contains(stderr, "clusters 2,") || strings.Contains(stderr, "warning") {
		t.Fatalf("with --sensor: exit %d: %s", code, stderr)
	}
}
