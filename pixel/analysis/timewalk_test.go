package analysis

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// simulate returns the hits of a gamma run with the time walk w, sorted by
// time.
func simulate(t testing.TB, w pixelsim.Walk, hits int) pixel.Hits {
	t.Helper()
	return simulateDataset(t, "gamma", w, hits)
}

// simulateDataset is simulate for a dataset of the pixel simulator.
func simulateDataset(t testing.TB, dataset string, w pixelsim.Walk, hits int) pixel.Hits {
	t.Helper()
	d, err := pixelsim.DatasetByName(dataset)
	if err != nil {
		t.Fatal(err)
	}
	var all pixel.Hits
	err = pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: hits, Seed: 7, RateMHz: 1, Walk: &w}, func(h *pixel.Hits) error {
		all.AppendRange(h, 0, h.Len())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// clusterAll clusters time-ordered hits with a window dt, keeping members.
func clusterAll(t *testing.T, h *pixel.Hits, dt pixel.Time) pixel.Clusters {
	t.Helper()
	cfg := pixel.DefaultConfig()
	cfg.Dt = dt
	c, err := pixel.NewClusterer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.KeepMembers(true)
	var all pixel.Clusters
	all.Reset()
	c.AddTo(&all, h)
	c.FlushTo(&all)
	return all
}

// sortByTime orders hits by time, as a sorter would.
func sortByTime(h *pixel.Hits) pixel.Hits {
	perm := make([]int, h.Len())
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return int(h.ToA[a] - h.ToA[b]) })
	var out pixel.Hits
	for _, i := range perm {
		out.AppendFrom(h, i)
	}
	return out
}

// partition names every cluster by its hits' pixels and ToTs, sorted: equal
// for two clusterings of the same hits (whatever their times) that group
// them alike.
func partition(c *pixel.Clusters) []string {
	var p []string
	m := &c.Members
	for i := range c.Len() {
		var keys []string
		for j := c.Start[i]; j < c.Start[i+1]; j++ {
			keys = append(keys, fmt.Sprintf("%d.%d.%d", m.X[j], m.Y[j], m.ToT[j]))
		}
		slices.Sort(keys)
		p = append(p, strings.Join(keys, " "))
	}
	slices.Sort(p)
	return p
}

func fitSample(t *testing.T, h *pixel.Hits, dt pixel.Time) WalkFit {
	t.Helper()
	cl := clusterAll(t, h, dt)
	s := NewWalkSample()
	if err := s.Add(&cl); err != nil {
		t.Fatal(err)
	}
	f, err := s.Fit()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestWalkFitRecoversTheSimulatedWalk(t *testing.T) {
	for _, want := range []pixelsim.Walk{pixelsim.DefaultWalk, {A: 1500, B: -2.5}, {A: 300, B: 0.5, C: 7}} {
		t.Run(fmt.Sprint(want), func(t *testing.T) {
			h := simulate(t, want, 400000)
			info := fitSample(t, &h, pixel.Microsecond)
			w := info.Hyperbola
			t.Logf("a %.3f +- %.3f, b %.4f +- %.4f, rms %.3f ns, %d hits (%d outliers) of %d clusters", w.A, w.AErr, w.B, w.BErr, info.RMS, info.Hits, info.Outliers, info.Clusters)
			if info.Clusters < 20000 || info.Hits < info.Clusters {
				t.Fatalf("measured %d hits of %d clusters", info.Hits, info.Clusters)
			}
			// Within four standard deviations, and the errors small enough
			// that this says something.
			if math.Abs(w.A-want.A) > 4*w.AErr || w.AErr > 0.05*want.A {
				t.Errorf("a = %v +- %v, simulated %v", w.A, w.AErr, want.A)
			}
			if math.Abs(w.B-want.B) > 4*w.BErr || w.BErr > 0.5 {
				t.Errorf("b = %v +- %v, simulated %v", w.B, w.BErr, want.B)
			}
			// The jitter of the simulation: uniform over 3 ns and the 1.5625
			// ns grid, for the hit and its reference.
			if info.RMS < 1 || info.RMS > 2 {
				t.Errorf("the delays spread by %v ns about the fit, the simulation's jitter about 1.5", info.RMS)
			}
			if w.C != 0 {
				t.Errorf("c = %v: a common offset cannot be measured", w.C)
			}
		})
	}
}

func TestWalkCorrectionRecoversTheClustersWithoutWalk(t *testing.T) {
	const dt = 30 * pixel.Nanosecond // below the walk's spread: it splits clusters
	walk := pixelsim.Walk{A: 1500, B: -2.5}
	walked := simulate(t, walk, 300000)
	clean := simulate(t, pixelsim.Walk{}, 300000)
	want := clusterAll(t, &clean, dt)
	raw := clusterAll(t, &walked, dt)
	if slices.Equal(partition(&raw), partition(&want)) {
		t.Fatal("the time walk did not change the clusters: the test cannot tell a correction")
	}
	f := fitSample(t, &walked, pixel.Microsecond)
	for name, w := range map[string]TimeWalk{"hyperbola": f.Hyperbola, "table": {Table: f.Table}} {
		t.Run(name, func(t *testing.T) {
			c, err := w.Correction()
			if err != nil {
				t.Fatal(err)
			}
			h := pixel.Hits{}
			h.AppendRange(&walked, 0, walked.Len())
			c.Correct(&h)
			h = sortByTime(&h)
			got := clusterAll(t, &h, dt)
			if g, w := partition(&got), partition(&want); !slices.Equal(g, w) {
				diff := 0
				for _, k := range g {
					if _, ok := slices.BinarySearch(w, k); !ok {
						diff++
					}
				}
				t.Fatalf("%d clusters, without walk %d; %d differ", len(g), len(w), diff)
			}
			if got.Len() < 50000 {
				t.Fatalf("only %d clusters", got.Len())
			}
		})
	}
}

func TestWalkTableFollowsTheSimulatedWalk(t *testing.T) {
	want := pixelsim.Walk{A: 1500, B: -2.5}
	h := simulate(t, want, 300000)
	checked := 0
	for _, p := range fitSample(t, &h, pixel.Microsecond).Table {
		if p.Hits < 200 {
			continue
		}
		truth := want.A / (float64(p.ToT) - want.B)
		// The reference's delay comes from the fit: allow its error too.
		if math.Abs(p.Ns-truth) > 5*p.Err+0.02*truth {
			t.Errorf("ToT %d: %v +- %v ns over %d hits, simulated %v", p.ToT, p.Ns, p.Err, p.Hits, truth)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d ToT values with 200 hits", checked)
	}
}

func TestWalkDelayAndCorrection(t *testing.T) {
	hyper := TimeWalk{A: 400, B: -4, C: 1}
	if got := hyper.Delay(4); got != 51 {
		t.Errorf("delay at ToT 4 = %v, want 400/8+1", got)
	}
	pole := TimeWalk{A: 100, B: 2.5}
	if got, want := pole.Delay(1), 100/0.5; got != want {
		t.Errorf("delay below the pole = %v, want that of ToT 3, %v", got, want)
	}
	table := TimeWalk{Table: []WalkPoint{{ToT: 10, Ns: 50}, {ToT: 20, Ns: 30}, {ToT: 40, Ns: 10}}}
	for tot, want := range map[int]float64{0: 50, 10: 50, 15: 40, 20: 30, 30: 20, 40: 10, 1000: 10} {
		if got := table.Delay(tot); got != want {
			t.Errorf("table delay at %d = %v, want %v", tot, got, want)
		}
	}
	c, err := table.Correction()
	if err != nil {
		t.Fatal(err)
	}
	if c.Spread() != 40*pixel.Nanosecond {
		t.Errorf("spread %v ns, want 40", c.Spread().Ns())
	}
	var h pixel.Hits
	h.Append(1, 1, 1000*pixel.Nanosecond, 15)
	h.Append(1, 2, 1000*pixel.Nanosecond, 65535)
	c.Correct(&h)
	if h.ToA[0] != 960*pixel.Nanosecond || h.ToA[1] != 990*pixel.Nanosecond {
		t.Errorf("corrected times %v, %v ns, want 960 and 990", h.ToA[0].Ns(), h.ToA[1].Ns())
	}
	for _, bad := range []TimeWalk{{A: math.NaN()}, {B: math.Inf(1)}, {Table: []WalkPoint{{ToT: 3}, {ToT: 3}}}, {Table: []WalkPoint{{ToT: 3, Ns: math.Inf(-1)}}}, {A: 2e9, B: -1}} {
		if _, err := bad.Correction(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestWalkSampleSizes: a sample measures the clusters of its sizes and
// only those, and refuses sizes without a reference or out of order.
func TestWalkSampleSizes(t *testing.T) {
	h := simulateDataset(t, "pion0", pixelsim.DefaultWalk, 100000)
	cl := clusterAll(t, &h, pixel.Microsecond)
	for _, sz := range [][2]int{{2, 20}, {2, 4}, {3, 3}, {5, 1000}} {
		s := NewWalkSample()
		if sz != [2]int{MinWalkSize, MaxWalkSize} {
			if err := s.SetSizes(sz[0], sz[1]); err != nil {
				t.Fatal(err)
			}
		}
		if lo, hi := s.Sizes(); lo != sz[0] || hi != sz[1] {
			t.Fatalf("sizes %d-%d, set %v", lo, hi, sz)
		}
		if err := s.Add(&cl); err != nil {
			t.Fatal(err)
		}
		var clusters, hits int64
		for i := range cl.Len() {
			if n := int(cl.Start[i+1] - cl.Start[i]); n >= sz[0] && n <= sz[1] {
				clusters++
				hits += int64(n - 1) // all but the reference
			}
		}
		if clusters == 0 || s.Clusters != clusters || s.Hits+s.Skipped != hits {
			t.Errorf("sizes %v: %d clusters and %d+%d hits measured, want %d and %d", sz, s.Clusters, s.Hits, s.Skipped, clusters, hits)
		}
	}
	for _, bad := range [][2]int{{1, 4}, {0, 0}, {5, 4}} {
		if err := NewWalkSample().SetSizes(bad[0], bad[1]); err == nil {
			t.Errorf("sizes %v accepted", bad)
		}
	}
}

// TestWalkFitOfCompactClusters: on simulated pion tracks at normal
// incidence, whose delta electrons arrive along their length, the
// clusters of 2 to 4 hits give back the simulated walk.
func TestWalkFitOfCompactClusters(t *testing.T) {
	want := pixelsim.DefaultWalk
	h := simulateDataset(t, "pion0", want, 400000)
	cl := clusterAll(t, &h, pixel.Microsecond)
	s := NewWalkSample()
	if err := s.SetSizes(2, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(&cl); err != nil {
		t.Fatal(err)
	}
	f, err := s.Fit()
	if err != nil {
		t.Fatal(err)
	}
	w := f.Hyperbola
	t.Logf("a %.3f +- %.3f, b %.4f +- %.4f, rms %.3f ns, %d hits of %d clusters", w.A, w.AErr, w.B, w.BErr, f.RMS, f.Hits, f.Clusters)
	if math.Abs(w.A-want.A) > 4*w.AErr || w.AErr > 0.05*want.A || math.Abs(w.B-want.B) > 4*w.BErr || f.RMS > 2 {
		t.Errorf("a = %v +- %v, b = %v +- %v, rms %v ns; simulated %v, %v", w.A, w.AErr, w.B, w.BErr, f.RMS, want.A, want.B)
	}
}

func TestWalkFitNeedsClusters(t *testing.T) {
	s := NewWalkSample()
	if _, err := s.Fit(); err != ErrFewWalkHits {
		t.Errorf("empty sample: %v", err)
	}
	noMembers := pixel.Clusters{ID: []int64{0}, Size: []int32{2}}
	if err := s.Add(&noMembers); err != pixel.ErrNoMembers {
		t.Errorf("clusters without members: %v", err)
	}
}

func TestTimeWalkFile(t *testing.T) {
	for _, w := range []TimeWalk{
		{A: 412.5, AErr: 1.25, B: -3.875, BErr: 0.0625, C: 2},
		{Table: []WalkPoint{{ToT: 3, Ns: 80.5, Err: 0.5, Hits: 12}, {ToT: 9, Ns: 40.25, Err: 0.125, Hits: 1000}}},
	} {
		var b bytes.Buffer
		if err := WriteTimeWalk(&b, "fitted by a test\non two lines", w); err != nil {
			t.Fatal(err)
		}
		// As an editor on Windows saves it: a byte-order mark, CRLF.
		edited := "\ufeff" + strings.ReplaceAll(b.String(), "\n", "\r\n")
		got, err := ReadTimeWalk(&b, "tw.txt")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("read back %+v, wrote %+v", got, w)
		}
		if got, err := ReadTimeWalk(strings.NewReader(edited), "tw.txt"); err != nil || fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("with a byte-order mark and CRLF: %+v, %v; wrote %+v", got, err, w)
		}
	}
	for text, want := range map[string]string{
		"":                                    "tw.txt: no \"model\" line",
		"a 1\n":                               "tw.txt: line 1: want \"model hyperbola\"",
		"model hyperbola\na 1\n":              "tw.txt: the hyperbola needs both a and b",
		"model hyperbola\na 1\nb 2\na 3\n":    "tw.txt: line 4: a given twice",
		"model hyperbola\na x\n":              "tw.txt: line 2: \"x\" is not a finite number",
		"model hyperbola\na NaN\n":            "tw.txt: line 2: \"NaN\" is not a finite number",
		"model hyperbola\ntot 1 2\n":          "tw.txt: line 2: want \"a|b|c VALUE [ERROR]\"",
		"model table\n":                       "tw.txt: a table without \"tot\" lines",
		"model table\ntot 5 1\ntot 5 2\n":     "tw.txt: line 3: ToT 5 after 5",
		"model table\ntot 1.5 1\n":            "tw.txt: line 2: ToT 1.5 is not a whole number",
		"# c\nmodel table\n\ntot 1 2 3 4 5\n": "tw.txt: line 4: want \"tot TOT DELAY_NS [ERROR [HITS]]\"",
	} {
		_, err := ReadTimeWalk(strings.NewReader(text), "tw.txt")
		if err == nil || !strings.HasPrefix(err.Error(), "timewalk: "+want) {
			t.Errorf("%q: error %v, want %s...", text, err, want)
		}
	}
}

func TestWalkSampleKeepsAUniformSample(t *testing.T) {
	defer func(n int) { walkReservoir = n }(walkReservoir)
	walkReservoir = 40000
	want := pixelsim.Walk{A: 1500, B: -2.5}
	h := simulate(t, want, 400000)
	cl := clusterAll(t, &h, pixel.Microsecond)
	s := NewWalkSample()
	if err := s.Add(&cl); err != nil {
		t.Fatal(err)
	}
	if len(s.delay) != walkReservoir || s.Hits < 5*int64(walkReservoir) {
		t.Fatalf("kept %d of %d hits, want %d", len(s.delay), s.Hits, walkReservoir)
	}
	f, err := s.Fit()
	if err != nil {
		t.Fatal(err)
	}
	if w := f.Hyperbola; math.Abs(w.A-want.A) > 4*w.AErr || math.Abs(w.B-want.B) > 4*w.BErr || f.Hits+f.Outliers != int64(walkReservoir) {
		t.Errorf("a %v +- %v, b %v +- %v from %d+%d hits", w.A, w.AErr, w.B, w.BErr, f.Hits, f.Outliers)
	}
}

// FuzzReadTimeWalk: whatever a file holds, reading it fails or gives a
// walk that writes and reads back the same, and corrects hits.
func FuzzReadTimeWalk(f *testing.F) {
	f.Add("model hyperbola\na 400 1\nb -4 0.1\nc 2\n")
	f.Add("# x\nmodel table\ntot 1 40 0.5 12\ntot 9 10\n")
	f.Add("model table\ntot 65535 -1e300\n")
	f.Fuzz(func(t *testing.T, text string) {
		w, err := ReadTimeWalk(strings.NewReader(text), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "timewalk: f: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		var b bytes.Buffer
		if err := WriteTimeWalk(&b, "c", w); err != nil {
			t.Fatal(err)
		}
		back, err := ReadTimeWalk(&b, "f")
		if err != nil || fmt.Sprint(back) != fmt.Sprint(w) {
			t.Fatalf("%+v read back as %+v, %v", w, back, err)
		}
		c, err := w.Correction()
		if err != nil {
			if !strings.Contains(err.Error(), "beyond ±1 s") {
				t.Fatal(err)
			}
			return
		}
		var h pixel.Hits
		h.Append(0, 0, 0, 0)
		h.Append(0, 0, 0, 65535)
		c.Correct(&h)
		if d := h.ToA[0] - h.ToA[1]; max(d, -d) > c.Spread() {
			t.Fatalf("hits moved apart by %v, more than the spread %v", d, c.Spread())
		}
	})
}

func BenchmarkWalkCorrect(b *testing.B) {
	h := simulate(b, pixelsim.DefaultWalk, 1<<20)
	c, err := (&TimeWalk{A: 400, B: -4}).Correction()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(h.Len())) // MB/s reads as Mhit/s
	for b.Loop() {
		c.Correct(&h)
	}
}
