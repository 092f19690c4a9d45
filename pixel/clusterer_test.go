package pixel

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

// testCase is one random input: hits on a sensor, clustered with dt.
type testCase struct {
	hits []refHit
	w, h int
	dt   Time
}

// generators make adversarial inputs. Times are often quantised so that
// ties and distances of exactly dt are common.
var generators = map[string]func(r *rand.Rand) testCase{
	"uniform": func(r *rand.Rand) testCase {
		tc := testCase{w: 1 + r.IntN(40), h: 1 + r.IntN(40), dt: randDt(r)}
		n := r.IntN(400)
		span := Time(1+r.IntN(20)) * tc.dt / 2
		tc.hits = make([]refHit, n)
		for i := range tc.hits {
			tc.hits[i] = refHit{r.IntN(tc.w), r.IntN(tc.h), quantise(r, Time(r.Int64N(int64(span)+1)), tc.dt)}
		}
		return tc
	},
	"tracks": func(r *rand.Rand) testCase {
		tc := testCase{w: 64, h: 64, dt: randDt(r)}
		for range 1 + r.IntN(12) {
			x, y := float64(r.IntN(64)), float64(r.IntN(64))
			a := r.Float64() * 2 * math.Pi
			t := Time(r.Int64N(int64(8*tc.dt) + 1))
			for range 5 + r.IntN(80) {
				xi, yi := int(x), int(y)
				if xi < 0 || yi < 0 || xi >= 64 || yi >= 64 {
					break
				}
				tc.hits = append(tc.hits, refHit{xi, yi, quantise(r, t, tc.dt)})
				x += math.Cos(a) * (0.5 + r.Float64())
				y += math.Sin(a) * (0.5 + r.Float64())
				t += Time(r.Int64N(int64(tc.dt)*3/2 + 2))
			}
		}
		return tc
	},
	"huge": func(r *rand.Rand) testCase {
		tc := testCase{w: 256, h: 256, dt: 200 * Nanosecond}
		cx, cy := 20+r.IntN(200), 20+r.IntN(200)
		rad := 3 + r.IntN(15)
		n := 1000 + r.IntN(3000)
		for range n {
			t := Time(r.Int64N(int64(20 * tc.dt)))
			tc.hits = append(tc.hits, refHit{cx + r.IntN(2*rad+1) - rad, cy + r.IntN(2*rad+1) - rad, quantise(r, t, tc.dt)})
		}
		return tc
	},
	"sparse": func(r *rand.Rand) testCase { // groups apart by about dt: isolated or not
		tc := testCase{w: 1 + r.IntN(12), h: 1 + r.IntN(12), dt: randDt(r)}
		t := Time(0)
		for range r.IntN(80) {
			x, y := r.IntN(tc.w), r.IntN(tc.h)
			for range 1 + r.IntN(isolatedMax+4) {
				tc.hits = append(tc.hits, refHit{min(tc.w-1, max(0, x+r.IntN(5)-2)), min(tc.h-1, max(0, y+r.IntN(5)-2)), t})
				t += Time(r.Int64N(int64(tc.dt)/3 + 2))
			}
			switch r.IntN(4) {
			case 0:
				t += tc.dt
			case 1:
				t += tc.dt + 1
			default:
				t += Time(r.Int64N(int64(3*tc.dt) + 2))
			}
		}
		return tc
	},
	"onepixel": func(r *rand.Rand) testCase {
		tc := testCase{w: 3, h: 3, dt: randDt(r)}
		for range r.IntN(300) {
			tc.hits = append(tc.hits, refHit{1, 1, quantise(r, Time(r.Int64N(int64(30*tc.dt)+1)), tc.dt)})
		}
		return tc
	},
	"pileup": func(r *rand.Rand) testCase {
		tc := testCase{w: 12, h: 12, dt: randDt(r)}
		for range r.IntN(600) {
			tc.hits = append(tc.hits, refHit{r.IntN(12), r.IntN(12), quantise(r, Time(r.Int64N(int64(4*tc.dt)+1)), tc.dt)})
		}
		return tc
	},
	"borders": func(r *rand.Rand) testCase {
		tc := testCase{w: 1 + r.IntN(5), h: 1 + r.IntN(300), dt: randDt(r)}
		for range r.IntN(300) {
			x, y := 0, r.IntN(tc.h)
			if r.IntN(2) == 0 {
				x = tc.w - 1
			}
			tc.hits = append(tc.hits, refHit{x, y, quantise(r, Time(r.Int64N(int64(10*tc.dt)+1)), tc.dt)})
		}
		return tc
	},
	"edges": func(r *rand.Rand) testCase { // both ends of the coordinate range, which are not neighbours
		tc := testCase{w: 1 << 16, h: 1 + r.IntN(3), dt: randDt(r)}
		tall := r.IntN(2) == 0 // the ends of y instead of x
		if tall {
			tc.w, tc.h = tc.h, tc.w
		}
		t := Time(0)
		for range r.IntN(60) {
			end, across := []int{0, 1, 1<<16 - 2, 1<<16 - 1}[r.IntN(4)], r.IntN(min(tc.w, tc.h))
			if tall {
				tc.hits = append(tc.hits, refHit{across, end, t})
			} else {
				tc.hits = append(tc.hits, refHit{end, across, t})
			}
			t += Time(r.Int64N(int64(tc.dt)*3/2 + 2))
		}
		return tc
	},
}

func randDt(r *rand.Rand) Time {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return Time(1 + r.IntN(100))
	default:
		return 200 * Nanosecond
	}
}

// quantise rounds t to a coarse step half of the time, creating ties.
func quantise(r *rand.Rand, t, dt Time) Time {
	switch r.IntN(3) {
	case 0:
		return t
	case 1:
		return t - t%(25*Nanosecond)
	default:
		if dt == 0 {
			return t - t%Nanosecond
		}
		return t - t%max(1, dt/2)
	}
}

// runClusterer feeds hits in time order (ties shuffled) in random batches
// and returns the partition as labels (the smallest input index of each
// cluster) and the emitted clusters.
func runClusterer(t *testing.T, r *rand.Rand, tc testCase, def Definition) ([]int, []*Clusters, fedOrder) {
	t.Helper()
	cfg := Config{Definition: def, Dt: tc.dt, Width: tc.w, Height: tc.h, longSpan: randSpan(r)}
	c, err := NewClusterer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.KeepMembers(true)
	c.compactAt = r.IntN(50)
	order := make([]int, len(tc.hits))
	for i := range order {
		order[i] = i
	}
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(tc.hits[a].t, tc.hits[b].t) })
	var batches []*Clusters
	keep := func(cl *Clusters) {
		cp := &Clusters{}
		cp.Reset()
		for i := range cl.Len() {
			cp.appendFrom(cl, i)
		}
		batches = append(batches, cp)
	}
	var batch Hits
	for i := 0; i < len(order); {
		batch.Reset()
		n := 1 + r.IntN(1+len(order)/3)
		for ; n > 0 && i < len(order); n-- {
			h := tc.hits[order[i]]
			batch.Append(uint16(h.x), uint16(h.y), h.t, uint16(order[i]))
			i++
		}
		keep(c.Add(&batch))
		checkBuffer(t, c)
	}
	keep(c.Flush())
	checkBuffer(t, c)
	label := make([]int, len(tc.hits))
	for i := range label {
		label[i] = -1
	}
	var id int64
	for _, cl := range batches {
		for k := range cl.Len() {
			if cl.ID[k] != id {
				t.Fatalf("cluster ids out of sequence: got %d, want %d", cl.ID[k], id)
			}
			id++
			m := math.MaxInt
			for _, tot := range cl.Members.ToT[cl.Start[k]:cl.Start[k+1]] {
				m = min(m, int(tot))
			}
			for _, tot := range cl.Members.ToT[cl.Start[k]:cl.Start[k+1]] {
				if label[tot] != -1 {
					t.Fatalf("hit %d emitted twice", tot)
				}
				label[tot] = m
			}
		}
	}
	if st := c.Stats(); st.Clusters != id || st.Hits != int64(len(tc.hits)) || st.Late != 0 || st.OutOfRange != 0 {
		t.Fatalf("stats %+v for %d hits, %d clusters", st, len(tc.hits), id)
	}
	fed := fedOrder{pos: make([]int64, len(order)), span: cfg.span()}
	for p, i := range order {
		fed.pos[i] = int64(p)
	}
	return label, batches, fed
}

// fedOrder is the arrival number of each input hit, and the clusterer's
// LongSpan: what decides the output order.
type fedOrder struct {
	pos  []int64
	span int64
}

// randSpan returns a Config.longSpan: the default half the time, else one
// that long clusters of the tests exceed.
func randSpan(r *rand.Rand) int64 {
	if r.IntN(2) == 0 {
		return 0
	}
	return 1 + r.Int64N(200)
}

// checkSpace checks that a group space (if any) has no pixel occupied
// between groups: clusterers share them (see groupSpace).
func checkSpace(t *testing.T, sp *groupSpace) {
	t.Helper()
	if sp == nil {
		return
	}
	for i, b := range sp.occ {
		if b != 0 {
			t.Fatalf("group space: pixels %08b occupied at byte %d after the group", b, i)
		}
	}
}

// checkBuffer checks the bookkeeping of the buffer: the count of emitted
// hits (which decides compaction), the front, and the long clusters set
// aside (live hits in order before the scan: roots, or hits that have
// joined an earlier cluster since the last look at them).
func checkBuffer(t *testing.T, c *Clusterer) {
	t.Helper()
	if c.group.lent != nil {
		t.Fatal("a clusterer kept the group space lent to it")
	}
	checkSpace(t, c.group.own)
	dead := 0
	for i, nd := range c.nodes {
		if nd.parent == -1 {
			dead++
		} else if i < c.front {
			t.Fatalf("hit %d before the front %d not emitted", i, c.front)
		}
	}
	if dead != c.dead {
		t.Fatalf("%d emitted hits in the buffer, counted %d", dead, c.dead)
	}
	for j, sk := range c.skipped {
		if r := sk.root; c.nodes[r].parent < 0 || int(r) >= c.scan || j > 0 && r <= c.skipped[j-1].root {
			t.Fatalf("skipped cluster %d at %d: not a live hit in order before the scan at %d", j, r, c.scan)
		}
	}
}

// forEachCase runs check on random cases of every generator and cluster
// definition, in parallel subtests; seeds cases each (fewer for the huge
// ones), the random source salted so that tests do not share cases.
func forEachCase(t *testing.T, gens map[string]func(*rand.Rand) testCase, seeds int, salt uint64,
	check func(t *testing.T, r *rand.Rand, seed int, tc testCase, def Definition)) {
	if testing.Short() {
		seeds = max(1, seeds/8)
	}
	for name, gen := range gens {
		for _, def := range []Definition{Local, Global, Window} {
			t.Run(fmt.Sprintf("%s/%s", name, def), func(t *testing.T) {
				t.Parallel()
				n := seeds
				if name == "huge" {
					n = max(3, seeds/30)
				}
				for seed := range n {
					r := rand.New(rand.NewPCG(uint64(seed), salt+uint64(def)))
					check(t, r, seed, gen(r), def)
				}
			})
		}
	}
}

func TestClustererMatchesReference(t *testing.T) {
	var long atomic.Int64
	t.Cleanup(func() {
		if long.Load() == 0 {
			t.Error("no cluster spanned more than LongSpan hits")
		}
	})
	forEachCase(t, generators, 300, 0, func(t *testing.T, r *rand.Rand, seed int, tc testCase, def Definition) {
		want := reference(tc.hits, tc.dt, def)
		got, batches, fed := runClusterer(t, r, tc, def)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d (%d hits, %dx%d, dt %d): partitions differ\n got %v\nwant %v", seed, len(tc.hits), tc.w, tc.h, tc.dt, got, want)
		}
		long.Add(checkFeatures(t, tc, batches, fed))
	})
}

// checkFeatures recomputes every feature from the members and checks the
// output order: by the arrival of the first hit, or of the last for a
// cluster spanning more than LongSpan hits. It returns how many did.
func checkFeatures(t *testing.T, tc testCase, batches []*Clusters, fed fedOrder) (long int64) {
	t.Helper()
	prev := int64(math.MinInt64)
	for _, cl := range batches {
		for k := range cl.Len() {
			m := cl.Members.ToT[cl.Start[k]:cl.Start[k+1]]
			var first, last Time = math.MaxInt64, math.MinInt64
			sx, sy := 0.0, 0.0
			xmin, xmax, ymin, ymax := math.MaxInt, -1, math.MaxInt, -1
			totSum, wsum, wx, wy, mx := int64(0), 0.0, 0.0, 0.0, -1.0
			for i, idx := range m {
				h := tc.hits[idx]
				if i > 0 && tc.hits[m[i-1]].t > h.t {
					t.Fatalf("members of cluster %d not in time order", cl.ID[k])
				}
				first, last = min(first, h.t), max(last, h.t)
				sx, sy = sx+float64(h.x), sy+float64(h.y)
				xmin, xmax, ymin, ymax = min(xmin, h.x), max(xmax, h.x), min(ymin, h.y), max(ymax, h.y)
				w := float64(idx) // ToT carries the index in these tests
				totSum += int64(idx)
				wsum, wx, wy, mx = wsum+w, wx+w*float64(h.x), wy+w*float64(h.y), max(mx, w)
			}
			cx, cy := sx/float64(len(m)), sy/float64(len(m))
			if wsum > 0 {
				cx, cy = wx/wsum, wy/wsum
			}
			if int(cl.Size[k]) != len(m) || cl.FirstToA[k] != first || cl.LastToA[k] != last || cl.ToTSum[k] != totSum ||
				int(cl.XMin[k]) != xmin || int(cl.XMax[k]) != xmax || int(cl.YMin[k]) != ymin || int(cl.YMax[k]) != ymax ||
				cl.Max[k] != mx || math.Abs(cl.X[k]-cx) > 1e-9 || math.Abs(cl.Y[k]-cy) > 1e-9 {
				t.Fatalf("cluster %d features wrong", cl.ID[k])
			}
			firstPos, lastPos := int64(math.MaxInt64), int64(-1)
			for _, idx := range m {
				firstPos, lastPos = min(firstPos, fed.pos[idx]), max(lastPos, fed.pos[idx])
			}
			key := firstPos
			if lastPos-firstPos > fed.span {
				key = lastPos
				long++
			}
			if key <= prev {
				t.Fatalf("cluster %d (hits %d to %d) out of order: key %d, the previous cluster's %d", cl.ID[k], firstPos, lastPos, key, prev)
			}
			prev = key
		}
	}
	return long
}

// TestAppendForeignClusters appends clusters that were not made by a
// clusterer (as a file reader builds them).
func TestAppendForeignClusters(t *testing.T) {
	var src Clusters
	src.Reset()
	src.ID, src.Size, src.FirstToA, src.LastToA = []int64{7}, []int32{2}, []Time{1}, []Time{2}
	src.ToTSum, src.ESum, src.X, src.Y = []int64{3}, []float64{0}, []float64{1.5}, []float64{2}
	src.XMin, src.XMax, src.YMin, src.YMax, src.Max = []uint16{1}, []uint16{2}, []uint16{2}, []uint16{2}, []float64{2}
	var dst Clusters
	dst.Reset()
	dst.Append(&src)
	if dst.Len() != 1 || dst.ID[0] != 7 || dst.X[0] != 1.5 || len(dst.root) != 1 {
		t.Fatalf("%+v", dst)
	}
}

// TestLateHitJoinsSkippedCluster: a long cluster set aside closed, with
// its key known, is joined to an earlier cluster by a late hit before the
// clusterer looks at the set-aside clusters again. It must go out with
// that cluster, not on its own (a stream found by a random search).
func TestLateHitJoinsSkippedCluster(t *testing.T) {
	stream := [][3]int{{2, 0, 103}, {2, 2, 109}, {1, 1, 111}, {1, 2, 117}, {3, 1, 114}, {0, 1, 122}, {3, 3, 123},
		{0, 2, 122}, {0, 0, 124}, {3, 2, 124}, {2, 1, 126}, {0, 2, 134}, {0, 3, 140}, {3, 3, 143}, {1, 1, 140},
		{2, 1, 148}, {3, 2, 154}, {1, 3, 159}, {3, 2, 161}, {1, 1, 160}, {1, 1, 161}, {3, 2, 164}, {2, 0, 162},
		{1, 3, 168}, {2, 0, 167}, {3, 1, 172}, {2, 2, 177}}
	var h Hits
	for i, s := range stream {
		h.Append(uint16(s[0]), uint16(s[1]), Time(s[2]), uint16(i))
	}
	c, _ := NewClusterer(Config{Definition: Window, Dt: 19, Width: 4, Height: 4, longSpan: 1})
	c.KeepMembers(true)
	var all Clusters
	all.Reset()
	for i := range h.Len() {
		c.AddTo(&all, h.view(i, i+1))
	}
	c.FlushTo(&all)
	checkKeys(t, &all)
	seen := make([]int, h.Len())
	for k := range all.Len() {
		m := all.Members.ToT[all.Start[k]:all.Start[k+1]]
		sum := int64(0)
		for _, i := range m {
			seen[i]++
			sum += int64(i)
		}
		if int(all.Size[k]) != len(m) || all.ToTSum[k] != sum {
			t.Fatalf("cluster %d: size %d, ToT sum %d; members %v", k, all.Size[k], all.ToTSum[k], m)
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("hit %d in %d clusters", i, n)
		}
	}
}

// TestEnergyOutOfRange: energies beyond MaxEnergy count as MaxEnergy and
// NaN as zero, in every mode, instead of wrapping the exact sums.
func TestEnergyOutOfRange(t *testing.T) {
	var h Hits
	h.Append(5, 5, 0, 10)
	h.Append(6, 5, 10, 10)
	h.Append(7, 5, 20, 10)
	h.Append(100, 100, 30, 10)
	h.E = []float32{1e30, 2, float32(math.NaN()), -1e30}
	for _, mode := range []Mode{Sequential, LanesMode, Chunked} {
		c, err := NewStream(DefaultConfig(), mode, 2)
		if err != nil {
			t.Fatal(err)
		}
		var out Clusters
		out.Reset()
		out.Append(c.Add(&h))
		out.Append(c.Flush())
		if out.Len() != 2 || out.ESum[0] != MaxEnergy+2 || out.Max[0] != MaxEnergy || out.X[0] != (5*MaxEnergy+6*2)/(MaxEnergy+2.0) ||
			out.ESum[1] != -MaxEnergy || out.Max[1] != -MaxEnergy {
			t.Fatalf("%v: %d clusters, energies %v, peaks %v, x %v", mode, out.Len(), out.ESum, out.Max, out.X)
		}
	}
}
