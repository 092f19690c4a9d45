package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func hitflow(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// hitflowOK runs a command that must succeed, and returns its standard
// output.
func hitflowOK(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := hitflow(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

var summary = regexp.MustCompile(`hits read (\d+), clusters (\d+), late hits (\d+), invalid hits (\d+), out of range (\d+), [0-9.]+ Mhit/s`)

func TestSimulateAndCluster(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"tpx3", "t3pa", "csv"} {
		in := filepath.Join(dir, "pion."+ext)
		code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "pion45", "--hits", "20000", "--seed", "3", "--disorder", "20us", "-o", in)
		if code != 0 {
			t.Fatalf("simulate %s: exit %d: %s", ext, code, stderr)
		}
		clusters, hits := filepath.Join(dir, ext+".csv"), filepath.Join(dir, ext+"-hits.csv")
		code, _, stderr = hitflow(t, "cluster", "--hits", hits, "-o", clusters, in)
		if code != 0 {
			t.Fatalf("cluster %s: exit %d: %s", ext, code, stderr)
		}
		m := summary.FindStringSubmatch(stderr)
		if m == nil || m[1] != "20000" || m[3] != "0" || m[4] != "0" || m[5] != "0" {
			t.Fatalf("summary %q", stderr)
		}
		// Every hit is labelled with the id of a cluster whose size agrees.
		sizes := map[string]int{}
		for i, line := range lines(t, clusters) {
			if i == 0 {
				continue
			}
			f := strings.Split(line, ",")
			sizes[f[0]], _ = strconv.Atoi(f[1])
		}
		if strconv.Itoa(len(sizes)) != m[2] {
			t.Fatalf("%d clusters written, summary says %s", len(sizes), m[2])
		}
		hl := lines(t, hits)
		if hl[0] != "x,y,toa_ns,tot,cluster" || len(hl) != 20001 {
			t.Fatalf("hits file: header %q, %d lines", hl[0], len(hl))
		}
		for _, line := range hl[1:] {
			sizes[line[strings.LastIndexByte(line, ',')+1:]]--
		}
		for id, n := range sizes {
			if n != 0 {
				t.Fatalf("%s: cluster %s size off by %d", ext, id, n)
			}
		}
	}
	// The three formats hold the same hits, so the clusters agree.
	a, b, c := lines(t, filepath.Join(dir, "tpx3.csv")), lines(t, filepath.Join(dir, "t3pa.csv")), lines(t, filepath.Join(dir, "csv.csv"))
	if strings.Join(a, "\n") != strings.Join(b, "\n") || strings.Join(a, "\n") != strings.Join(c, "\n") {
		t.Fatal("formats clustered differently")
	}
}

func lines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestBuiltinSample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.clog")
	code, _, stderr := hitflow(t, "cluster", "-q", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if m := summary.FindStringSubmatch(stderr); m == nil || m[1] != "1000000" {
		t.Fatalf("summary %q", stderr)
	}
	if l := lines(t, out); !strings.HasPrefix(l[0], "Frame 1 (") {
		t.Fatalf("clog starts %q", l[0])
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"version"}, 0, ""},
		{[]string{"cluster", "--bogus"}, 2, "unknown flag"},
		{[]string{"cluster", "--definition", "fuzzy"}, 2, `unknown cluster definition "fuzzy"`},
		{[]string{"cluster", "--dt", "5"}, 2, "not a duration"},
		{[]string{"cluster", "--format", "xml"}, 2, "unknown format"},
		{[]string{"cluster", "--layout", "hex"}, 2, "unknown chip layout"},
		{[]string{"cluster", "-o", filepath.Join(dir, "x.txt")}, 2, "unknown format"},
		{[]string{"cluster", "-o", filepath.Join(dir, "x.csv"), filepath.Join(dir, "missing.tpx3")}, 1, "missing.tpx3"},
		{[]string{"simulate", "pixel"}, 2, "needs -o"},
		{[]string{"simulate", "pixel", "--dataset", "muon", "-o", "x.csv"}, 2, "unknown dataset"},
		{[]string{"simulate", "pixel", "-o", filepath.Join(dir, "x.clog")}, 2, "extension"},
		// 0 would have been the library's default rate, with "0 Mhit/s" said.
		{[]string{"simulate", "pixel", "--rate", "0", "-o", filepath.Join(dir, "r.csv")}, 2, "--rate 0: must be a positive"},
		{[]string{"simulate", "pixel", "--hits", "-1", "-o", filepath.Join(dir, "r.csv")}, 2, "--hits -1"},
		{[]string{"version", "extra"}, 2, "takes no arguments"},
	} {
		code, stdout, stderr := hitflow(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", tc.args, code, stderr, tc.code, tc.msg)
		}
		if _, err := os.Stat(filepath.Join(dir, "r.csv")); err == nil {
			t.Errorf("%v: the output was created", tc.args)
		}
		if tc.args[0] == "version" && tc.code == 0 && !strings.HasPrefix(stdout, "hitflow ") {
			t.Errorf("version printed %q", stdout)
		}
	}
}

func TestBadInputKeepsClusters(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.t3pa")
	os.WriteFile(in, []byte("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n0\t5\t10\t3\t0\t0\n1\t6\toops\t3\t0\t0\n"), 0o644)
	out := filepath.Join(dir, "c.csv")
	code, _, stderr := hitflow(t, "cluster", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, "bad.t3pa: line 3") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if l := lines(t, out); len(l) != 2 || !strings.HasPrefix(l[1], "0,1,250,") {
		t.Fatalf("clusters file %q", l)
	}
}

// TestHelpHasExamples walks the whole command tree: every command that
// runs has examples in its --help.
func TestHelpHasExamples(t *testing.T) {
	var walk func(c *cobra.Command, path []string)
	n := 0
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
		if !c.Runnable() {
			return
		}
		n++
		code, stdout, _ := hitflow(t, append(path, "--help")...)
		if code != 0 || !strings.Contains(stdout, "Examples:") {
			t.Errorf("%v --help: exit %d, no examples:\n%s", path, code, stdout)
		}
	}
	walk(newRootCmd(io.Discard, io.Discard), nil)
	if n < 12 {
		t.Fatalf("only %d commands found", n)
	}
}

// TestProfiles: both profiles are written, and are pprof's gzipped
// protocol buffers, after a command that succeeded and after one that
// failed.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"simulate", "pixel", "--hits", "200000", "-q", "-o", filepath.Join(dir, "g.tpx3")}, exitOK},
		{[]string{"cluster", "-q", "-o", filepath.Join(dir, "c.csv"), filepath.Join(dir, "missing.tpx3")}, exitRuntime},
	} {
		cpu, mem, trace := filepath.Join(dir, tc.args[0]+".cpu"), filepath.Join(dir, tc.args[0]+".mem"), filepath.Join(dir, tc.args[0]+".trace")
		code, _, stderr := hitflow(t, append(tc.args, "--cpuprofile", cpu, "--memprofile", mem, "--trace", trace)...)
		if code != tc.code {
			t.Fatalf("%v: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
		}
		for _, name := range []string{cpu, mem} {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
				t.Fatalf("%s: %d bytes, not a gzipped profile", name, len(b))
			}
		}
		// A finished trace: the header of the Go version, and the stacks
		// of the command's own goroutines.
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b, []byte("github.com/hitflow/hitflow/cmd/hitflow.")) {
			t.Fatalf("%s: %d bytes, not a trace of hitflow", trace, len(b))
		}
	}
	for _, flag := range []string{"--cpuprofile", "--trace"} {
		code, _, stderr := hitflow(t, "version", flag, filepath.Join(dir, "no", "such", "dir"))
		if code != exitUsage || !strings.Contains(stderr, flag) {
			t.Fatalf("unwritable %s: exit %d: %s", flag, code, stderr)
		}
	}
}

// TestMask: the hits of the pixels in a --mask file are dropped before
// clustering and counted in the summary; a bad mask file is an error
// naming its line.
func TestMask(t *testing.T) {
	dir := t.TempDir()
	var in strings.Builder
	in.WriteString("x,y,toa_ns,tot\n")
	for i := range 3000 { // pixel (5, 6) every 100 ns; a hit elsewhere every 1 us
		x, y := 5, 6
		if i%10 == 0 {
			x, y = 100+i%50, 200
		}
		fmt.Fprintf(&in, "%d,%d,%d,3\n", x, y, 100*i)
	}
	input, mask := filepath.Join(dir, "hot.csv"), filepath.Join(dir, "mask.txt")
	os.WriteFile(input, []byte(in.String()), 0o644)
	os.WriteFile(mask, []byte("# hot\n5 6\n0,0\n"), 0o644)
	clusters, hits := filepath.Join(dir, "c.csv"), filepath.Join(dir, "h.csv")
	code, _, stderr := hitflow(t, "cluster", "-q", "--dt", "1us", "--mask", mask, "--hits", hits, "-o", clusters, input)
	if m := summary.FindStringSubmatch(stderr); code != 0 || m == nil || m[1] != "3000" || m[2] != "300" ||
		!strings.Contains(stderr, ", masked 2700 hits on 2 pixels") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if l := lines(t, hits); len(l) != 301 || strings.Contains(strings.Join(l, "\n"), "\n5,6,") {
		t.Fatalf("hits file: %d lines", len(l))
	}
	os.WriteFile(mask, []byte("5 6\n5 600\n"), 0o644)
	code, _, stderr = hitflow(t, "cluster", "-q", "--mask", mask, "-o", clusters, input)
	if code != 1 || !strings.Contains(stderr, "mask.txt: line 2: pixel (5, 600) is outside the 1027x256 sensor") {
		t.Fatalf("bad mask: exit %d: %s", code, stderr)
	}
}

// TestMaskCommand finds the hot pixels of a real background run (two
// pixels fire 85 K of its 99 K hits) and clusters it with them masked.
func TestMaskCommand(t *testing.T) {
	in := "../../../shared/data/tpx3/suann_socket_background_serval32.tpx3"
	if _, err := os.Stat(in); err != nil {
		t.Skip("no ../shared/data")
	}
	dir := t.TempDir()
	mask := filepath.Join(dir, "mask.txt")
	code, _, stderr := hitflow(t, "mask", "-q", "-o", mask, in)
	if code != 0 || !strings.Contains(stderr, "98548 hits in 1 file on pixels x 0-1026, y 4-255 of the 1027x256 sensor, median 1 hits per pixel that fired: 6 hot pixels with 88661 hits (90 %)") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	l := lines(t, mask)
	if len(l) != 8 || !strings.HasPrefix(l[0], "# hitflow mask --factor 20 --min-hits 100: ") || l[1] != "x y" ||
		l[2] != "788 85 # 45015 hits" || l[3] != "1020 38 # 40328 hits" || l[7] != "840 46 # 120 hits" {
		t.Fatalf("mask file %q", l)
	}
	code, _, stderr = hitflow(t, "cluster", "-q", "--mask", mask, "-o", filepath.Join(dir, "c.csv"), in)
	if m := summary.FindStringSubmatch(stderr); code != 0 || m == nil || m[2] != "712" || !strings.Contains(stderr, "masked 88661 hits on 6 pixels") {
		t.Fatalf("cluster: exit %d: %s", code, stderr)
	}
	// Three chips of four outside the single layout: neither counted as
	// on the sensor nor lost from the hits read.
	code, _, stderr = hitflow(t, "mask", "-q", "--layout", "single", "-o", mask, in)
	if code != 0 || !strings.Contains(stderr, "2341 hits in 1 file on pixels x 0-255, y 6-255 of the 256x256 sensor, median 1 hits per pixel that fired: 0 hot pixels with 0 hits (0 %); 96207 hits outside the sensor not counted") {
		t.Fatalf("single layout: exit %d: %s", code, stderr)
	}
	// A mask of no hot pixel is a mask all the same.
	code, _, stderr = hitflow(t, "cluster", "-q", "--layout", "single", "--mask", mask, "-o", filepath.Join(dir, "c.csv"), in)
	if m := summary.FindStringSubmatch(stderr); code != 0 || m == nil || m[1] != "98548" || m[2] != "128" || m[5] != "96207" {
		t.Fatalf("cluster, single layout: exit %d: %s", code, stderr)
	}
	// Stricter: to stdout.
	code, stdout, _ := hitflow(t, "mask", "-q", "--factor", "5", "--min-hits", "20", in)
	if code != 0 || strings.Count(stdout, "\n") != 11 || !strings.Contains(stdout, "\n789 85 # 79 hits\n") {
		t.Fatalf("stdout %q", stdout)
	}
	// The hit map.
	plot := filepath.Join(dir, "hits.png")
	if code, _, stderr := hitflow(t, "mask", "-q", "--plot", plot, "-o", mask, in); code != 0 {
		t.Fatalf("--plot: exit %d: %s", code, stderr)
	}
	pic, err := os.ReadFile(plot)
	if err != nil {
		t.Fatal(err)
	}
	// A dot per pixel of the 1027-pixel row, and the axis and colour bar.
	img, err := png.Decode(bytes.NewReader(pic))
	if err != nil {
		t.Fatalf("hit map: %v", err)
	}
	if w := img.Bounds().Dx(); w < 1027+150 {
		t.Fatalf("hit map %d dots wide", w)
	}
	if code, _, stderr := hitflow(t, "mask", "--plot", "hits.jpg", in); code != 2 || !strings.Contains(stderr, "want a .png or .svg file") {
		t.Fatalf("--plot hits.jpg: exit %d: %s", code, stderr)
	}
	if code, _, stderr := hitflow(t, "mask", "--factor", "-1", in); code != 2 || !strings.Contains(stderr, "must not be negative") {
		t.Fatalf("negative factor: exit %d: %s", code, stderr)
	}
	if code, _, stderr := hitflow(t, "mask"); code != 2 || !strings.Contains(stderr, "mask needs the hit files") {
		t.Fatalf("no files: exit %d: %s", code, stderr)
	}
}

// TestCalibratedRun clusters a disordered .tpx3 run with a calibration:
// every hit in the label file carries its energy from the surrogate
// function, and each cluster's energy sum and energy-weighted centroid
// agree with its hits'.
func TestCalibratedRun(t *testing.T) {
	dir := t.TempDir()
	for name, v := range map[string]string{"a": "1.9", "b": "36", "c": "55", "t": "2.8"} {
		row := strings.Repeat(v+" ", 255) + v + "\r\n"
		if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(strings.Repeat(row, 256)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, clusters, hits := filepath.Join(dir, "run.tpx3"), filepath.Join(dir, "c.csv"), filepath.Join(dir, "h.csv")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--dataset", "pion45", "--hits", "200000", "--rate", "20", "--disorder", "50us", "-o", in); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "single", "--calib", dir, "--hits", hits, "-o", clusters, in)
	sum := summary.FindStringSubmatch(stderr)
	if code != 0 || sum == nil || sum[1] != "200000" || sum[4] != "0" {
		t.Fatalf("cluster: exit %d: %s", code, stderr)
	}
	hl := lines(t, hits)
	if hl[0] != "x,y,toa_ns,tot,energy_kev,cluster" || len(hl) != 200001 {
		t.Fatalf("hits file: header %q, %d lines", hl[0], len(hl))
	}
	type sums struct{ e, ex, ey float64 }
	byID := map[string]*sums{}
	for _, line := range hl[1:] {
		f := strings.Split(line, ",")
		x, _ := strconv.ParseFloat(f[0], 64)
		y, _ := strconv.ParseFloat(f[1], 64)
		tot, _ := strconv.ParseFloat(f[3], 64)
		e, err := strconv.ParseFloat(f[4], 64)
		// The larger root of 1.9 E^2 + (36 - 1.9*2.8 - tot) E + (2.8 tot - 36*2.8 - 55) = 0.
		bq, cq := 36-1.9*2.8-tot, 2.8*tot-36*2.8-55
		want := (-bq + math.Sqrt(bq*bq-4*1.9*cq)) / (2 * 1.9)
		if err != nil || math.Abs(e-want) > 1e-5*want {
			t.Fatalf("hit %q: energy %v, want %v", line, e, want)
		}
		s := byID[f[5]]
		if s == nil {
			s = &sums{}
			byID[f[5]] = s
		}
		s.e, s.ex, s.ey = s.e+e, s.ex+e*x, s.ey+e*y
	}
	cl := lines(t, clusters)
	if len(cl)-1 != len(byID) || sum[2] != strconv.Itoa(len(byID)) {
		t.Fatalf("%d clusters, %d in the hits file", len(cl)-1, len(byID))
	}
	for _, line := range cl[1:] {
		f := strings.Split(line, ",") // id,size,toa_ns,span_ns,tot_sum,energy_kev,x,y,...
		s := byID[f[0]]
		e, _ := strconv.ParseFloat(f[5], 64)
		x, _ := strconv.ParseFloat(f[6], 64)
		y, _ := strconv.ParseFloat(f[7], 64)
		if s == nil || math.Abs(e-s.e) > 1e-4*s.e || math.Abs(x-s.ex/s.e) > 1e-4 || math.Abs(y-s.ey/s.e) > 1e-4 {
			t.Fatalf("cluster %q: its hits sum to %+v", line, s)
		}
	}
}

// TestTDCAndSensorFlags: --tdc writes the trigger packets of a real run
// on the hits' time axis; --sensor bounds text inputs, the hits outside
// counted, and a malformed size is a usage error.
func TestTDCAndSensorFlags(t *testing.T) {
	dir := t.TempDir()
	in := "../../../shared/data/tpx3/greg_220ms_TDC_GDC_enabled_20230214_3.tpx3"
	if _, err := os.Stat(in); err == nil {
		tdc := filepath.Join(dir, "tdc.csv")
		code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "quad", "--tdc", tdc, "-o", filepath.Join(dir, "c.csv"), in)
		l := lines(t, tdc)
		if code != 0 || !strings.Contains(stderr, "TDC 13291,") || len(l) != 13292 || l[0] != "edge,trigger,time_ns,chip" ||
			l[1] != "tdc1_rise,3471,102951932655.46875,0" || l[13291] != "tdc1_rise,991,328686939504.953125,0" {
			t.Fatalf("exit %d: %s; %d lines, %q ... %q", code, stderr, len(l), l[:2], l[len(l)-1])
		}
	}
	csv := filepath.Join(dir, "hits.csv")
	// The sensor is at least the layout's (1024x256 for the default row).
	os.WriteFile(csv, []byte("x,y,toa_ns,tot\n0,0,0,5\n2047,3,10,5\n2048,3,20,5\n1,1,30,5\n5,256,40,5\n"), 0o644)
	code, _, stderr := hitflow(t, "cluster", "-q", "--sensor", "2048X4", "-o", filepath.Join(dir, "c.csv"), csv)
	if m := summary.FindStringSubmatch(stderr); code != 0 || m == nil || m[1] != "5" || m[2] != "2" || m[5] != "2" {
		t.Fatalf("--sensor 2048X4: exit %d: %s", code, stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "--sensor", "300", csv); code != 2 || !strings.Contains(stderr, `"300" is not a sensor size like 256x256`) {
		t.Fatalf("--sensor 300: exit %d: %s", code, stderr)
	}
}
