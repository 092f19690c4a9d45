package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotCommand draws every kind of figure from files the other
// commands wrote, and checks each is a PNG.
func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "pb.tpx3")
	calo := filepath.Join(dir, "calo.csv")
	hitflowOK(t, "simulate", "pixel", "--dataset", "pb0", "--hits", "50000", "-o", in)
	hitflowOK(t, "cluster", "-q", "--hits", filepath.Join(dir, "h.parquet"), "-o", filepath.Join(dir, "c.parquet"), in)
	hitflowOK(t, "cluster", "-q", "-o", filepath.Join(dir, "c.root"), in)
	hitflowOK(t, "simulate", "clue", "--layers", "2", "--points", "1000", "-o", calo)
	hitflowOK(t, "clue", "--dc", "3", "--rhoc", "8", "-o", filepath.Join(dir, "r.root"), calo)
	hitflowOK(t, "pet", "simulate", "--emissions", "10000", "-o", filepath.Join(dir, "ph"))
	var written []string
	for _, args := range [][]string{
		{"plot", "-o", filepath.Join(dir, "p"), filepath.Join(dir, "c.parquet")},
		{"plot", "--cluster", "3", "--hits", filepath.Join(dir, "h.parquet"), "-o", filepath.Join(dir, "p"), filepath.Join(dir, "c.parquet")},
		{"plot", "--cluster", "4", "--by", "toa", "-o", filepath.Join(dir, "r"), filepath.Join(dir, "c.root")},
		{"plot", "--plot-layer", "1", "-o", filepath.Join(dir, "clue"), filepath.Join(dir, "r.root")},
		{"plot", "-o", filepath.Join(dir, "img"), filepath.Join(dir, "ph_emitted.nrrd")},
	} {
		written = append(written, strings.Fields(hitflowOK(t, args...))...)
	}
	if len(written) != 8 {
		t.Fatalf("wrote %q", written)
	}
	for _, name := range written {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f.Close()
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot", filepath.Join(dir, "c.parquet")}, 2, "-o PREFIX"},
		{[]string{"plot", "--format", "gif", "-o", "x", filepath.Join(dir, "c.parquet")}, 2, "png or svg"},
		{[]string{"plot", "--cluster", "3", "-o", "x", filepath.Join(dir, "c.parquet")}, 2, "needs the hits"},
		{[]string{"plot", "--cluster", "99999999", "-o", "x", filepath.Join(dir, "c.root")}, 1, "no hits of cluster"},
		{[]string{"plot", "-o", "x", filepath.Join(dir, "x.txt")}, 2, "unknown format"},
		{[]string{"plot", "-o", "x", filepath.Join(dir, "h.parquet")}, 2, "h.parquet holds hits with their cluster ids (cluster --hits), not clusters"},
		{[]string{"image", "-o", filepath.Join(dir, "x.png"), filepath.Join(dir, "h.parquet")}, 2, "h.parquet holds hits with their cluster ids"},
		{[]string{"plot", "-o", "x"}, 2, "plot takes a file"},
		{[]string{"plot", "--cluster", "3", "-o", "x", filepath.Join(dir, "c.root"), filepath.Join(dir, "c.parquet")}, 2, "plot takes one file, but for the overview of clusters files (the parts of a run), got 2"},
		{[]string{"plot", "-o", "x", filepath.Join(dir, "c.parquet"), filepath.Join(dir, "r.root")}, 2, "r.root holds a CLUE result, not clusters as " + filepath.Join(dir, "c.parquet")},
	} {
		code, _, stderr := hitflow(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
		}
	}
}

// TestPlotClassExamples: the example clusters per class come with the
// hits of a .root file or of --hits, and a --hits file of another run is
// refused.
func TestPlotClassExamples(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "p.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--dataset", "pion45", "--hits", "100000", "-o", in); code != 0 {
		t.Fatal(stderr)
	}
	shapes, labels, root := filepath.Join(dir, "s.parquet"), filepath.Join(dir, "h.parquet"), filepath.Join(dir, "s.root")
	for _, args := range [][]string{{"--hits", labels, "-o", shapes}, {"-o", root}} {
		if code, _, stderr := hitflow(t, append([]string{"cluster", "-q", "--shapes", in}, args...)...); code != 0 {
			t.Fatal(stderr)
		}
	}
	for _, args := range [][]string{{"--hits", labels, shapes}, {root}} {
		code, stdout, stderr := hitflow(t, append([]string{"plot", "-o", filepath.Join(dir, "f")}, args...)...)
		if code != 0 || !strings.Contains(stdout, "f_examples.png") {
			t.Errorf("%v: exit %d: %s %s", args, code, stdout, stderr)
		}
	}
	if code, stdout, _ := hitflow(t, "plot", "-o", filepath.Join(dir, "g"), shapes); code != 0 || strings.Contains(stdout, "examples") {
		t.Errorf("examples without hits: exit %d: %s", code, stdout)
	}
	other, in2 := filepath.Join(dir, "other.parquet"), filepath.Join(dir, "p2.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "-q", "--dataset", "pion45", "--seed", "2", "--hits", "100000", "-o", in2); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "-q", "--hits", other, "-o", os.DevNull, in2); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "plot", "--hits", other, "-o", filepath.Join(dir, "h"), shapes); code != exitRuntime || !strings.Contains(stderr, "--hits "+other+" is not of "+shapes) {
		t.Errorf("hits of another clustering: exit %d: %s", code, stderr)
	}
}

// TestPrefixOf: an -o PREFIX ending in the extension of what the command
// writes is the prefix before it, whatever the extension's case; a name
// that is all extension is a prefix as it stands.
func TestPrefixOf(t *testing.T) {
	for _, tc := range []struct{ out, prefix, ext string }{
		{"run", "run", ""},
		{"run.png", "run", ".png"},
		{"a/b.SVG", "a/b", ".svg"},
		{"x.tar.svg", "x.tar", ".svg"},
		{"x.pngx", "x.pngx", ""},
		{"x.nrrd", "x.nrrd", ""},
		{".png", ".png", ""},
		{"dir/.png", "dir/.png", ""},
	} {
		if prefix, ext := prefixOf(tc.out, ".png", ".svg"); prefix != tc.prefix || ext != tc.ext {
			t.Errorf("prefixOf(%q) = %q, %q; want %q, %q", tc.out, prefix, ext, tc.prefix, tc.ext)
		}
	}
}

// TestOutputPrefixes: -o naming the file a command writes writes that
// file, not the name with the extension twice: plot's figure (its
// extension the format), and J-PET's events and image.
func TestOutputPrefixes(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	hitflowOK(t, "simulate", "clue", "--layers", "1", "--points", "500", "-o", at("calo.csv"))
	hitflowOK(t, "clue", "--dc", "3", "--rhoc", "8", "-o", at("r.csv"), at("calo.csv"))
	hitflowOK(t, "pet", "simulate", "--emissions", "5000", "-o", at("ev.bin"))
	hitflowOK(t, "pet", "reconstruct", "--iterations", "1", "-o", at("rec.nrrd"), at("ev.bin"))
	if got := strings.TrimSpace(hitflowOK(t, "plot", "-o", at("fig.svg"), at("r.csv"))); got != at("fig.svg") {
		t.Errorf("plot -o fig.svg wrote %q", got)
	}
	if got := strings.TrimSpace(hitflowOK(t, "plot", "-o", at("fig2.PNG"), at("r.csv"))); got != at("fig2.png") {
		t.Errorf("plot -o fig2.PNG wrote %q", got)
	}
	for _, name := range []string{"ev.bin", "ev_emitted.nrrd", "ev_detected.nrrd", "ev_naive.nrrd", "rec.nrrd", "rec_01.png"} {
		if _, err := os.Stat(at(name)); err != nil {
			t.Error(err)
		}
	}
	if svg, err := os.ReadFile(at("fig.svg")); err != nil || !strings.Contains(string(svg[:min(len(svg), 200)]), "<svg") {
		t.Errorf("fig.svg is not an SVG: %v %.80q", err, svg)
	}
	f, err := os.Open(at("fig2.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("fig2.png: %v", err)
	}
	matches, _ := filepath.Glob(at("*.*.*"))
	if len(matches) != 0 {
		t.Errorf("names with two extensions: %q", matches)
	}
	if code, _, stderr := hitflow(t, "plot", "--format", "svg", "-o", at("x.png"), at("r.csv")); code != 2 || !strings.Contains(stderr, "--format is svg") {
		t.Errorf("plot --format svg -o x.png: exit %d, %q", code, stderr)
	}
}

// TestPlotParts: the overview of a run's parts, as cluster --rotate
// writes them, is that of the run in one file, byte for byte.
func TestPlotParts(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	hitflowOK(t, "simulate", "pixel", "-q", "--hits", "200000", "-o", at("s.tpx3"))
	hitflowOK(t, "cluster", "-q", "-o", at("whole.parquet"), at("s.tpx3"))
	hitflowOK(t, "cluster", "-q", "--rotate", "1MiB", "-o", at("part.csv"), at("s.tpx3"))
	parts, _ := filepath.Glob(at("part-*.csv"))
	if len(parts) < 3 {
		t.Fatalf("parts %v", parts)
	}
	whole := strings.Fields(hitflowOK(t, "plot", "-o", at("w"), at("whole.parquet")))
	split := strings.Fields(hitflowOK(t, append([]string{"plot", "-o", at("p")}, parts...)...))
	if len(whole) != 4 || len(split) != len(whole) {
		t.Fatalf("wrote %v and %v", whole, split)
	}
	for i := range whole {
		a, _ := os.ReadFile(whole[i])
		b, _ := os.ReadFile(split[i])
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs from %s", split[i], whole[i])
		}
	}
}
