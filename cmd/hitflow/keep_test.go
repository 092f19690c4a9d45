package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	for _, args := range [][]string{{"--keep", "muons"}, {"--classes", rulesFile}, {"--shapes", "-o", filepath.Join(dir, "x.root")}} {
		if code, _, stderr := hitflow(t, append([]string{"cluster", "-o", os.DevNull, raw}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
