package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// TestKeep: --keep writes the clusters of the classes asked for, with
// their hits, and nothing else; the classes are those of the shapes of
// the clusters of a full run, from its --hits file.
func TestKeep(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "pion.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "pion45", "--hits", "200000", "--seed", "5", "-q", "-o", raw); code != 0 {
		t.Fatal(stderr)
	}
	all, allHits := filepath.Join(dir, "all.csv"), filepath.Join(dir, "all-hits.csv")
	if code, _, stderr := hitflow(t, "cluster", "-q", "--hits", allHits, "-o", all, raw); code != 0 {
		t.Fatal(stderr)
	}
	labelled, err := format.ReadHits(allHits)
	if err != nil {
		t.Fatal(err)
	}
	// The classes of the full run's clusters, from their hits.
	byCluster := map[int64]*pixel.Clusters{}
	var ids []int64
	for i, id := range labelled.Labels {
		c := byCluster[id]
		if c == nil {
			c = &pixel.Clusters{ID: []int64{id}, Start: []int{0, 0}}
			byCluster[id] = c
			ids = append(ids, id)
		}
		c.Members.AppendFrom(&labelled.Hits, i)
		c.Start[1]++
	}
	slices.Sort(ids)
	var want []int64
	var shaper analysis.Shaper
	rules := analysis.DefaultRules
	rules.StraightWidth = 2.5 // from the rules file below
	for _, id := range ids {
		s, err := shaper.Shapes(byCluster[id], nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := rules.Classify(s[0]); c == analysis.StraightTrack || c == analysis.Dot {
			want = append(want, id)
		}
	}
	rulesFile := filepath.Join(dir, "rules.txt")
	os.WriteFile(rulesFile, []byte("straight_width 2.5\n"), 0o644)
	kept, keptHits := filepath.Join(dir, "kept.parquet"), filepath.Join(dir, "kept-hits.csv")
	code, _, stderr := hitflow(t, "cluster", "-q", "--keep", "straight_track,dot", "--classes", rulesFile, "--hits", keptHits, "-o", kept, raw)
	if code != 0 {
		t.Fatal(stderr)
	}
	c, err := format.ReadClusters(kept)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.ID, want) || len(want) == 0 || len(want) == len(ids) {
		t.Fatalf("kept %d clusters, want %d of %d", c.Len(), len(want), len(ids))
	}
	h, err := format.ReadHits(keptHits)
	if err != nil {
		t.Fatal(err)
	}
	var hits int
	for _, id := range want {
		hits += byCluster[id].Members.Len()
	}
	if h.Hits.Len() != hits {
		t.Errorf("%d hits written, the kept clusters have %d", h.Hits.Len(), hits)
	}
	if !strings.Contains(stderr, fmt.Sprintf("--keep wrote %d of %d clusters; dropped ", len(want), len(ids))) {
		t.Errorf("summary: %s", stderr)
	}
	// --shapes: every cluster's morphology and class, as computed from
	// its hits, in the output; and the class figure.
	shaped := filepath.Join(dir, "shaped.parquet")
	if code, _, stderr := hitflow(t, "cluster", "-q", "--shapes", "--classes", rulesFile, "-o", shaped, raw); code != 0 {
		t.Fatal(stderr)
	}
	sc, err := format.ReadClusters(shaped)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sc.ID, ids) || !sc.HasShapes() {
		t.Fatalf("%d clusters, shapes %v", sc.Len(), sc.HasShapes())
	}
	for i, id := range ids {
		s, _ := shaper.Shapes(byCluster[id], nil)
		w := s[0]
		if sc.Pixels[i] != w.Pixels || sc.Inner[i] != w.Inner || sc.Roundness[i] != w.Roundness || sc.Linearity[i] != w.Linearity ||
			sc.Length[i] != w.Length || sc.Width[i] != w.Width || analysis.Class(sc.Class[i]) != rules.Classify(w) {
			t.Fatalf("cluster %d: %d %d %v %v %v %v %v, want %+v %v", id, sc.Pixels[i], sc.Inner[i], sc.Roundness[i], sc.Linearity[i],
				sc.Length[i], sc.Width[i], analysis.Class(sc.Class[i]), w, rules.Classify(w))
		}
	}
	if code, stdout, stderr := hitflow(t, "plot", "-o", filepath.Join(dir, "fig"), shaped); code != 0 || !strings.Contains(stdout, "fig_classes.png") {
		t.Errorf("plot: exit %d: %s %s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"--keep", "muons"}, {"--classes", rulesFile}, {"--shapes", "-o", filepath.Join(dir, "x.clog")}} {
		if code, _, stderr := hitflow(t, append([]string{"cluster", "-o", os.DevNull, raw}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// TestTimeOfFlight: on a real run with TDC pulses, every cluster's time
// of flight is its first ToA minus the latest pulse of the --tdc file at
// or before it, in .csv and .parquet alike; the energy and wavelength
// follow from the flight path.
func TestTimeOfFlight(t *testing.T) {
	in := "../../../shared/data/tpx3/greg_220ms_TDC_GDC_enabled_20230214_3.tpx3"
	if _, err := os.Stat(in); err != nil {
		t.Skip("no ../shared/data")
	}
	dir := t.TempDir()
	tdc := filepath.Join(dir, "tdc.csv")
	var pulses []pixel.Time
	for _, ext := range []string{".csv", ".parquet"} {
		out := filepath.Join(dir, "tof"+ext)
		code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "quad", "--tof", "tdc1r", "--flight-path", "10", "--period", "16.667ms", "--tdc", tdc, "-o", out, in)
		if code != 0 || !strings.Contains(stderr, "time of flight from tdc1_rise: 0 clusters before the first pulse") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if pulses == nil {
			for _, l := range lines(t, tdc)[1:] {
				f := strings.Split(l, ",")
				ns, _ := strconv.ParseFloat(f[2], 64)
				if f[0] == "tdc1_rise" {
					pulses = append(pulses, pixel.TimeFromNs(ns))
				}
			}
		}
		c, err := format.ReadClusters(out)
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != 76 || !c.HasTOF() {
			t.Fatalf("%s: %d clusters, tof %v", ext, c.Len(), c.HasTOF())
		}
		for i, toa := range c.FirstToA {
			k := len(pulses) - 1
			for k >= 0 && pulses[k] > toa {
				k--
			}
			if c.Pulse[i] != int64(k) || c.TOF[i] != toa-pulses[k] {
				t.Fatalf("%s: cluster %d: pulse %d, tof %v; want %d, %v", ext, i, c.Pulse[i], c.TOF[i].Ns(), k, (toa - pulses[k]).Ns())
			}
		}
	}
	// The derived columns: lambda[Å] = 3956.034 / v[m/s], v = 10 m / tof.
	l := lines(t, filepath.Join(dir, "tof.csv"))
	if !strings.HasSuffix(l[0], ",tof_ns,pulse,energy_ev,wavelength_a") {
		t.Fatalf("header %s", l[0])
	}
	f := strings.Split(l[1], ",")
	tofNs, _ := strconv.ParseFloat(f[13], 64)
	lambda, _ := strconv.ParseFloat(f[16], 64)
	if want := 3956.034 / (10 / (tofNs * 1e-9)); math.Abs(lambda-want) > 1e-5*want {
		t.Errorf("wavelength %v Å, want %v", lambda, want)
	}
	if code, stdout, stderr := hitflow(t, "plot", "-o", filepath.Join(dir, "fig"), filepath.Join(dir, "tof.parquet")); code != 0 || !strings.Contains(stdout, "fig_tof.png") {
		t.Errorf("plot: exit %d: %s %s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"--tof", "tdc3r"}, {"--flight-path", "10"}, {"--tof", "tdc1r", "--period", "-1s"}, {"--tof", "tdc1r", "-o", filepath.Join(dir, "x.clog")}} {
		if code, _, stderr := hitflow(t, append([]string{"cluster", "-o", os.DevNull, in}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
