package pixel

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// restartRun is a stream of segments, each a random case, separated by
// clock resets: every segment but the first starts more than the restart
// gap before the latest hit of the one before. Some segments are a single
// bogus hit far in the future, which the next segment goes back from.
type restartRun struct {
	cfg      Config
	hits     []refHit // segment after segment
	segments []int    // start of each segment in hits
	restarts int64    // segments that start earlier than the one before
}

// newRestartRun makes a run of 2 to 5 segments from gen, on the sensor and
// dt of its first case; within a segment the hits keep their times
// relative to each other.
func newRestartRun(r *rand.Rand, gen func(*rand.Rand) testCase, def Definition) restartRun {
	first := gen(r)
	gap := first.dt + 1 + Time(r.Int64N(int64(10*first.dt)+2))
	run := restartRun{cfg: Config{Definition: def, Dt: first.dt, Width: first.w, Height: first.h, Restart: gap, longSpan: randSpan(r)}}
	latest := Time(1 << 50)
	for k := range 2 + r.IntN(4) {
		var seg []refHit
		var base Time
		switch {
		case k == 0:
			seg, base = first.hits, latest
		case r.IntN(4) == 0: // a bogus hit far ahead
			seg, base = []refHit{{r.IntN(first.w), r.IntN(first.h), 0}}, latest+gap+1+Time(r.Int64N(int64(gap)))
		default:
			tc := gen(r)
			for _, h := range tc.hits {
				seg = append(seg, refHit{h.x % first.w, h.y % first.h, h.t})
			}
			span := Time(0)
			for _, h := range seg {
				span = max(span, h.t)
			}
			base = latest - gap - 1 - span - Time(r.Int64N(int64(gap)*3+1))
		}
		if len(seg) == 0 {
			continue
		}
		if base < latest && len(run.hits) > 0 {
			run.restarts++
		}
		run.segments = append(run.segments, len(run.hits))
		t0 := slices.MinFunc(seg, func(a, b refHit) int { return cmp.Compare(a.t, b.t) }).t
		latest = base // the latest time of the segment, which the next goes back from
		for _, h := range seg {
			h.t += base - t0
			run.hits = append(run.hits, h)
			latest = max(latest, h.t)
		}
	}
	return run
}

// want labels every hit with the smallest index of its cluster, the
// clusters of each segment found by the reference on the segment alone.
func (run restartRun) want() []int {
	label := make([]int, 0, len(run.hits))
	ends := slices.Concat(run.segments[1:], []int{len(run.hits)})
	for k, from := range run.segments {
		for _, l := range reference(run.hits[from:ends[k]], run.cfg.Dt, run.cfg.Definition) {
			label = append(label, from+l)
		}
	}
	return label
}

// sorted returns the hits segment by segment, each in time order (ties
// shuffled), with the index in ToT.
func (run restartRun) sorted(r *rand.Rand) *Hits {
	ends := slices.Concat(run.segments[1:], []int{len(run.hits)})
	h := &Hits{}
	for k, from := range run.segments {
		order := make([]int, 0, ends[k]-from)
		for i := from; i < ends[k]; i++ {
			order = append(order, i)
		}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(run.hits[a].t, run.hits[b].t) })
		for _, i := range order {
			h.Append(uint16(run.hits[i].x), uint16(run.hits[i].y), run.hits[i].t, uint16(i))
		}
	}
	return h
}

// labels returns the partition of the hits by the clusters' members, as
// the smallest hit index of each cluster.
func labels(t *testing.T, cl *Clusters, n int) []int {
	t.Helper()
	label := make([]int, n)
	for i := range label {
		label[i] = -1
	}
	for k := range cl.Len() {
		members := cl.Members.ToT[cl.Start[k]:cl.Start[k+1]]
		m := int(slices.Min(members))
		for _, i := range members {
			if label[i] != -1 {
				t.Fatalf("hit %d in two clusters", i)
			}
			label[i] = m
		}
	}
	return label
}

// TestRestartsMatchSegments: a stream whose clock is reset now and then
// clusters as its segments would on their own, in every mode, with the
// restarts counted and no hit late.
func TestRestartsMatchSegments(t *testing.T) {
	gens := map[string]func(*rand.Rand) testCase{"stream": streamCase}
	for name, gen := range generators {
		if name != "huge" {
			gens[name] = gen
		}
	}
	seeds := 60
	if testing.Short() {
		seeds = 8
	}
	for name, gen := range gens {
		for _, def := range []Definition{Local, Global, Window} {
			t.Run(fmt.Sprintf("%s/%s", name, def), func(t *testing.T) {
				t.Parallel()
				n := seeds
				if name == "stream" { // long: the reference is quadratic
					n = max(2, seeds/6)
				}
				for seed := range n {
					r := rand.New(rand.NewPCG(uint64(seed), 17+uint64(def)))
					run := newRestartRun(r, gen, def)
					checkRestartRun(t, r, seed, run)
				}
			})
		}
	}
}

func checkRestartRun(t *testing.T, r *rand.Rand, seed int, run restartRun) {
	h := run.sorted(r)
	seq, _ := NewClusterer(run.cfg)
	seq.KeepMembers(true)
	seq.compactAt = r.IntN(50)
	want := feed(r, seq, h)
	checkBuffer(t, seq)
	if got := labels(t, want, len(run.hits)); !slices.Equal(got, run.want()) {
		t.Fatalf("seed %d (%d hits, segments at %v, dt %d, restart gap %d): partitions differ\n got %v\nwant %v",
			seed, len(run.hits), run.segments, run.cfg.Dt, run.cfg.Restart, got, run.want())
	}
	st := seq.Stats()
	if st.Restarts != run.restarts || st.Late != 0 || st.Clusters != int64(want.Len()) {
		t.Fatalf("seed %d: stats %+v, want %d restarts", seed, st, run.restarts)
	}
	workers := 1 + r.IntN(4)
	lanes, _ := NewLanes(run.cfg, workers, 1+r.IntN(1+h.Len()/2))
	lanes.check0 = 1 + r.IntN(64)
	modes := []Stream{lanes, randomSwitch(t, r, run.cfg, h.Len())}
	if run.cfg.Definition == Local {
		chunked, _ := NewChunkedClusterer(run.cfg, workers, 1+r.IntN(1+h.Len()))
		chunked.chunk = 1 + r.IntN(200)
		modes = append(modes, chunked)
	}
	for _, s := range modes {
		s.KeepMembers(true)
		got := feed(r, s, h)
		if err := equalClusters(got, want); err != nil {
			t.Fatalf("seed %d: %T: %v", seed, s, err)
		}
		if s.Stats() != st {
			t.Fatalf("seed %d: %T stats %+v, sequential %+v", seed, s, s.Stats(), st)
		}
	}
}

// TestRestartGapBoundary: a hit exactly the restart gap earlier than the
// latest is late; one unit more restarts the stream. A reversed stream
// restarts at every hit and holds nothing back.
func TestRestartGapBoundary(t *testing.T) {
	cfg := Config{Definition: Local, Dt: 200 * Nanosecond, Width: 8, Height: 8, Restart: Microsecond}
	streams := func() []Stream {
		c, _ := NewClusterer(cfg)
		l, _ := NewLanes(cfg, 2, 3)
		ch, _ := NewChunkedClusterer(cfg, 2, 3)
		return []Stream{c, l, ch}
	}
	for _, s := range streams() {
		var h Hits
		h.Append(1, 1, 10*Microsecond, 1)
		h.Append(1, 1, 9*Microsecond, 1)   // exactly the gap: late
		h.Append(1, 1, 9*Microsecond-1, 1) // one more: a restart
		s.Add(&h)
		s.Flush()
		if st := s.Stats(); st.Late != 1 || st.Restarts != 1 || st.Clusters != 3 {
			t.Fatalf("%T: stats %+v, want 1 late, 1 restart, 3 clusters", s, st)
		}
	}
	for _, s := range streams() {
		var h Hits
		for k := range 1000 {
			h.Append(uint16(k%8), 2, Time(1000-k)*2*Microsecond, 1)
		}
		var clusters int
		for i := range h.Len() {
			clusters += s.Add(h.view(i, i+1)).Len()
			if c, ok := s.(*Clusterer); ok && len(c.nodes)-c.front > 1 {
				t.Fatalf("hit %d: %d hits held", i, len(c.nodes)-c.front)
			}
		}
		clusters += s.Flush().Len()
		if st := s.Stats(); st.Restarts != 999 || st.Late != 0 || clusters != 1000 {
			t.Fatalf("%T: stats %+v, %d clusters", s, st, clusters)
		}
	}
}

// TestSorterRestarts: disordered segments with clock resets between them
// come out of the sorter each in time order, one after the other, with no
// hit late.
func TestSorterRestarts(t *testing.T) {
	for seed := range 200 {
		r := rand.New(rand.NewPCG(uint64(seed), 19))
		window := Time(1 + r.Int64N(int64(Microsecond)))
		restart := window + 1 + Time(r.Int64N(int64(window)))
		var in, want Hits
		latest := Time(1 << 50)
		for range 1 + r.IntN(4) {
			tc := generators["uniform"](r)
			if len(tc.hits) == 0 {
				continue
			}
			seg := disordered(r, tc, window)
			order := make([]int, seg.Len())
			for i := range order {
				order[i] = i
			}
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(seg.ToA[a], seg.ToA[b]) })
			base := latest - restart - 1 - slices.Max(seg.ToA) - Time(r.Int64N(int64(restart)))
			for i := range seg.Len() {
				seg.ToA[i] += base
				seg.ToT[i] += uint16(in.Len())
			}
			latest = slices.Max(seg.ToA)
			in.AppendRange(seg, 0, seg.Len())
			for _, i := range order {
				want.AppendFrom(seg, i)
			}
		}
		s, err := NewSorter(window, restart)
		if err != nil {
			t.Fatal(err)
		}
		out := sortStream(r, s, &in, 200)
		if !slices.Equal(out.ToA, want.ToA) || !slices.Equal(out.ToT, want.ToT) {
			t.Fatalf("seed %d: %d hits out, want the %d segments in order", seed, out.Len(), want.Len())
		}
	}
	if _, err := NewSorter(Microsecond, Microsecond); err == nil {
		t.Fatal("a restart gap as short as the window accepted")
	}
}

// TestTimesAnywhere: times far from zero, negative ones included, give
// the reference's clusters in every mode. Offsets of up to 2^62 keep
// every difference the clusterers take (of times within a restart gap)
// in range.
func TestTimesAnywhere(t *testing.T) {
	for _, off := range []Time{-1 << 62, -1 << 40, -12345, 1 << 40, 1 << 62} {
		forEachCase(t, generators, 20, 77, func(t *testing.T, r *rand.Rand, seed int, tc testCase, def Definition) {
			for i := range tc.hits {
				tc.hits[i].t += off
			}
			want := reference(tc.hits, tc.dt, def)
			if got, _, _ := runClusterer(t, r, tc, def); !slices.Equal(got, want) {
				t.Fatalf("offset %d, seed %d: partitions differ\n got %v\nwant %v", off, seed, got, want)
			}
			h := sortedHits(r, tc, false)
			cfg := Config{Definition: def, Dt: tc.dt, Width: tc.w, Height: tc.h}
			seq, _ := NewClusterer(cfg)
			seq.KeepMembers(true)
			batches := func() *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 3)) }
			ref := feed(batches(), seq, h)
			for _, mode := range []Mode{LanesMode, Chunked} {
				if mode == Chunked && def != Local {
					continue // chunked clusters the local definition only
				}
				s, err := NewStream(cfg, mode, 2)
				if err != nil {
					t.Fatal(err)
				}
				s.KeepMembers(true)
				if err := equalClusters(feed(batches(), s, h), ref); err != nil {
					t.Fatalf("offset %d, seed %d, %v: %v", off, seed, mode, err)
				}
			}
		})
	}
}
