package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel/analysis"
)

// TestTimeWalk: the walk fitted from a simulation with a known walk is
// that walk, and clustering with it gives the clusters of the same
// simulation without walk.
func TestTimeWalk(t *testing.T) {
	dir := t.TempDir()
	walked, clean := filepath.Join(dir, "walk.tpx3"), filepath.Join(dir, "clean.tpx3")
	for in, walk := range map[string]string{walked: "1500,-2.5,0", clean: "none"} {
		if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--rate", "1", "--hits", "300000", "--timewalk", walk, "-o", in); code != 0 {
			t.Fatalf("simulate: exit %d: %s", code, stderr)
		}
	}
	tw, fig := filepath.Join(dir, "tw.txt"), filepath.Join(dir, "tw.svg")
	code, _, stderr := hitflow(t, "timewalk", "fit", "-q", "--dt", "1us", "--plot", fig, "-o", tw, walked)
	if code != 0 || !strings.Contains(stderr, "hitflow: time walk a = 1") {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	f, err := os.Open(tw)
	if err != nil {
		t.Fatal(err)
	}
	w, err := analysis.ReadTimeWalk(f, tw)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if abs(w.A-1500) > 4*w.AErr || abs(w.B+2.5) > 4*w.BErr || w.AErr == 0 {
		t.Fatalf("fitted a %v +- %v, b %v +- %v; simulated 1500, -2.5", w.A, w.AErr, w.B, w.BErr)
	}
	if b, err := os.ReadFile(fig); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("no figure: %v", err)
	}
	// --sizes: the summary and the file say which clusters were measured.
	compact := filepath.Join(dir, "compact.txt")
	if code, _, stderr := hitflow(t, "timewalk", "fit", "-q", "--dt", "1us", "--sizes", "2:4", "-o", compact, walked); code != 0 || !strings.Contains(stderr, " clusters of 2-4 hits,") {
		t.Fatalf("--sizes 2:4: exit %d: %s", code, stderr)
	}
	if l := lines(t, compact); !strings.Contains(l[0], " --sizes 2:4: ") || !strings.Contains(l[1], " clusters of 2-4 hits,") {
		t.Fatalf("--sizes 2:4 file: %q", l[:2])
	}
	table := filepath.Join(dir, "table.txt")
	if code, _, stderr := hitflow(t, "timewalk", "fit", "-q", "--dt", "1us", "--model", "table", "-o", table, walked); code != 0 || !slices.Contains(lines(t, table), "model table") {
		t.Fatalf("table fit: exit %d: %s", code, stderr)
	}
	// 30 ns is less than the walk spreads a cluster's hits: uncorrected,
	// clusters split.
	sizes := func(args ...string) []string {
		t.Helper()
		out := filepath.Join(dir, "c.csv")
		code, _, stderr := hitflow(t, append([]string{"cluster", "-q", "--dt", "30ns", "-o", out}, args...)...)
		if code != 0 {
			t.Fatalf("cluster %v: exit %d: %s", args, code, stderr)
		}
		if m := summary.FindStringSubmatch(stderr); m == nil || m[3] != "0" {
			t.Fatalf("summary %q", stderr)
		}
		var s []string
		for _, l := range lines(t, out)[1:] {
			f := strings.Split(l, ",")
			s = append(s, f[1]+" "+f[5]) // size and ToT sum
		}
		slices.Sort(s)
		return s
	}
	want := sizes(clean)
	if slices.Equal(sizes(walked), want) {
		t.Fatal("the walk did not change the clusters: the test tells nothing")
	}
	for _, model := range []string{tw, table} {
		if got := sizes("--timewalk", model, walked); !slices.Equal(got, want) {
			t.Errorf("--timewalk %s: %d clusters, without walk %d", filepath.Base(model), len(got), len(want))
		}
	}

	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("model hyperbola\na 1\nb 2 3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cluster", "--timewalk", bad, "-o", os.DevNull, walked}, exitRuntime, bad + ": line 3"},
		{[]string{"cluster", "--timewalk", walked, "-o", os.DevNull, walked}, exitRuntime, "line 1: want \"model hyperbola\""},
		{[]string{"cluster", "--timewalk", tw, "-o", tw, walked}, exitUsage, "--timewalk"},
		{[]string{"timewalk", "fit", "--model", "spline", walked}, exitUsage, "--model \"spline\""},
		{[]string{"timewalk", "fit", "-o", walked, walked}, exitUsage, walked},
		{[]string{"timewalk", "fit"}, exitUsage, "needs the hit files"},
		{[]string{"timewalk", "fit", "--sizes", "1:4", walked}, exitUsage, "--sizes 1:4: cluster sizes 1 to 4: want 2 or more"},
		{[]string{"timewalk", "fit", "--sizes", "5:4", walked}, exitUsage, "the fewest first"},
		{[]string{"timewalk", "fit", "--sizes", "4", walked}, exitUsage, "--sizes \"4\": want MIN:MAX"},
		{[]string{"timewalk", "fit", "-o", filepath.Join(dir, "none.txt"), clean + "x"}, exitRuntime, "x"},
		{[]string{"simulate", "pixel", "--timewalk", "1,2", "-o", filepath.Join(dir, "x.tpx3")}, exitUsage, "want A,B,C"},
		{[]string{"simulate", "pixel", "--timewalk", "1,2,0", "-o", filepath.Join(dir, "x.tpx3")}, exitUsage, "below 1"},
	} {
		code, _, stderr := hitflow(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, code, c.code, c.want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none.txt")); err == nil {
		t.Error("a failed fit left a file")
	}
	// Clusters of a single hit give nothing to fit.
	single := filepath.Join(dir, "single.csv")
	var b strings.Builder
	b.WriteString("x,y,toa_ns,tot\n")
	for i := range 100 {
		b.WriteString(strconv.Itoa(i*2) + ",5," + strconv.Itoa(i*1000) + ",10\n")
	}
	if err := os.WriteFile(single, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := hitflow(t, "timewalk", "fit", "-o", filepath.Join(dir, "none.txt"), single); code != exitRuntime || !strings.Contains(stderr, "too few clusters") {
		t.Errorf("single hits: exit %d: %s", code, stderr)
	}
}

func abs(v float64) float64 { return max(v, -v) }
