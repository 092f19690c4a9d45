package main

import (
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestClueCommand(t *testing.T) {
	dir := t.TempDir()
	calo := filepath.Join(dir, "calo.csv")
	if code, _, stderr := hitflow(t, "simulate", "clue", "--layers", "3", "--points", "2000", "--seed", "2", "-o", calo); code != 0 {
		t.Fatalf("simulate clue: %s", stderr)
	}
	if l := lines(t, calo); l[0] != "x,y,layer,weight" || len(l) != 6001 {
		t.Fatalf("simulated file: %q, %d lines", l[0], len(l))
	}
	// 0 is the library's default; from a user it is refused, not read as
	// 100 layers or 10,000 points.
	for _, flag := range []string{"--layers", "--points", "--cluster-size"} {
		zero := filepath.Join(dir, "zero.csv")
		if code, _, stderr := hitflow(t, "simulate", "clue", flag, "0", "-o", zero); code != 2 || !strings.Contains(stderr, flag+" 0: must be at least 1") {
			t.Fatalf("simulate clue %s 0: exit %d: %s", flag, code, stderr)
		}
		if _, err := os.Stat(zero); !os.IsNotExist(err) {
			t.Fatalf("simulate clue %s 0 wrote a file: %v", flag, err)
		}
	}
	out, plot := filepath.Join(dir, "out.csv"), filepath.Join(dir, "p.png")
	code, _, stderr := hitflow(t, "clue", "--dc", "3", "--rhoc", "8", "--deltac", "5", "--deltao", "5", "--workers", "2", "--plot", plot, "-o", out, calo)
	if code != 0 {
		t.Fatalf("clue: exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`points 6000, seeds (\d+), clusters (\d+), outliers (\d+), [0-9.]+ ms \(2 workers\)`).FindStringSubmatch(stderr)
	if m == nil || m[1] != m[2] || m[1] == "0" {
		t.Fatalf("summary %q", stderr)
	}
	l := lines(t, out)
	if l[0] != "x,y,layer,weight,rho,delta,nh,isSeed,clusterId" || len(l) != 6001 {
		t.Fatalf("output header %q, %d lines", l[0], len(l))
	}
	f, err := os.Open(plot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("plot: %v", err)
	}
	// The same with one worker: identical output.
	out1 := filepath.Join(dir, "out1.csv")
	if code, _, stderr := hitflow(t, "clue", "--dc", "3", "--rhoc", "8", "--deltac", "5", "--deltao", "5", "--workers", "1", "-o", out1, calo); code != 0 {
		t.Fatal(stderr)
	}
	if strings.Join(lines(t, out1), "\n") != strings.Join(l, "\n") {
		t.Fatal("1 and 2 workers wrote different results")
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"clue", "--rhoc", "1", calo}, 2, "needs --dc"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1"}, 2, "one input file"},
		{[]string{"clue", "--dc", "-1", "--rhoc", "1", calo}, 2, "dc = -1"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1", "--kernel", "box", calo}, 2, "unknown kernel"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1", "-o", out, filepath.Join(dir, "none.csv")}, 1, "none.csv"},
		{[]string{"bench", "clue", "--steps", "0"}, 2, "--steps"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1", "--workers", "-1", "-o", out, calo}, 2, "--workers must not be negative"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1", "--plot", filepath.Join(dir, "p.png"), "--plot-axes", "0,5", "-o", out, calo}, 2, "--plot-axes 0,5: the points have coordinates 0 to 1"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1", "--plot", filepath.Join(dir, "p.png"), "--plot-layer", "999", "-o", out, calo}, 2, "--plot-layer 999: no point is on that layer"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1", "--plot", filepath.Join(dir, "p.txt"), "-o", out, calo}, 2, "want a .png or .svg file"},
	} {
		code, _, stderr := hitflow(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want %d with %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("x,y,weight\n1,2,1\n1,2,-4\n"), 0o644)
	if code, _, stderr := hitflow(t, "clue", "--dc", "1", "--rhoc", "1", "-o", out, bad); code != 1 || !strings.Contains(stderr, "bad.csv: line 3") {
		t.Errorf("bad input: exit %d, %q", code, stderr)
	}
}

func TestBenchClue(t *testing.T) {
	code, stdout, stderr := hitflow(t, "bench", "clue", "--steps", "1", "--repeat", "1")
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stdout, "| 100000 | cpu, 1 worker |") || !strings.HasPrefix(stdout, "hitflow ") || !strings.Contains(stdout, " CPUs, GOMAXPROCS ") || !strings.Contains(stdout, "CLUE's 2D scans: ") {
		t.Fatalf("table:\n%s", stdout)
	}
}
