package pixel

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// streamCase is a long stream: small clusters at a steady rate, with a hot
// pixel or a long track now and then, so that clusters cross many windows.
func streamCase(r *rand.Rand) testCase {
	tc := testCase{w: 24, h: 24, dt: randDt(r)}
	if tc.dt == 0 {
		tc.dt = 200 * Nanosecond
	}
	n := 2000 + r.IntN(6000)
	gap := Time(1 + r.Int64N(int64(tc.dt)))
	t := Time(0)
	for len(tc.hits) < n {
		switch r.IntN(50) {
		case 0: // a hot pixel firing for a while
			x, y := r.IntN(tc.w), r.IntN(tc.h)
			for range 50 + r.IntN(500) {
				tc.hits = append(tc.hits, refHit{x, y, t + Time(r.Int64N(int64(tc.dt)*20))})
			}
		case 1: // a slow track across the sensor
			y := r.IntN(tc.h)
			for x := range tc.w {
				tc.hits = append(tc.hits, refHit{x, y, t + Time(x)*tc.dt*9/10})
			}
		default:
			x, y := r.IntN(tc.w), r.IntN(tc.h)
			for range 1 + r.IntN(6) {
				tc.hits = append(tc.hits, refHit{min(tc.w-1, max(0, x+r.IntN(3)-1)), min(tc.h-1, max(0, y+r.IntN(3)-1)), quantise(r, t+Time(r.Int64N(int64(tc.dt)+1)), tc.dt)})
			}
		}
		t += gap
	}
	return tc
}

// sortedHits returns the hits of tc in time order (ties shuffled), the ToT
// carrying the input index, and random energies when calibrated.
func sortedHits(r *rand.Rand, tc testCase, calibrated bool) *Hits {
	order := make([]int, len(tc.hits))
	for i := range order {
		order[i] = i
	}
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(tc.hits[a].t, tc.hits[b].t) })
	h := &Hits{}
	for _, i := range order {
		hit := tc.hits[i]
		h.Append(uint16(hit.x), uint16(hit.y), hit.t, uint16(i))
	}
	if calibrated {
		h.E = make([]float32, h.Len())
		for i := range h.E {
			h.E[i] = r.Float32() * 100
		}
	}
	return h
}

// feed gives h to s in random batches and returns all clusters, taking
// each batch's clusters at random from Add or straight from AddTo (and
// FlushTo), which must give the same.
func feed(r *rand.Rand, s Stream, h *Hits) *Clusters { return feedWatching(r, s, h, nil) }

// feedWatching is feed calling watch, if not nil, after every batch.
func feedWatching(r *rand.Rand, s Stream, h *Hits, watch func()) *Clusters {
	var all Clusters
	all.Reset()
	for i := 0; i < h.Len(); {
		j := min(h.Len(), i+1+r.IntN(1+h.Len()/4))
		if r.IntN(2) == 0 {
			s.AddTo(&all, h.view(i, j))
		} else {
			all.appendAll(s.Add(h.view(i, j)))
		}
		if watch != nil {
			watch()
		}
		i = j
	}
	if r.IntN(2) == 0 {
		s.FlushTo(&all)
	} else {
		all.appendAll(s.Flush())
	}
	return &all
}

// equalClusters reports the first difference between two outputs.
func equalClusters(a, b *Clusters) error {
	if err := equalFeatures(a, b); err != nil {
		return err
	}
	if !slices.Equal(a.Start, b.Start) || !slices.Equal(a.Members.ToT, b.Members.ToT) || !slices.Equal(a.Members.E, b.Members.E) {
		return fmt.Errorf("members differ")
	}
	return nil
}

// equalFeatures compares the clusters' ids and features, bit for bit (a
// zero's sign too).
func equalFeatures(a, b *Clusters) error {
	if a.Len() != b.Len() {
		return fmt.Errorf("%d clusters, want %d", a.Len(), b.Len())
	}
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	for i := range a.Len() {
		if a.ID[i] != b.ID[i] || a.root[i] != b.root[i] || a.Size[i] != b.Size[i] || a.FirstToA[i] != b.FirstToA[i] ||
			a.LastToA[i] != b.LastToA[i] || a.ToTSum[i] != b.ToTSum[i] || !same(a.ESum[i], b.ESum[i]) ||
			!same(a.X[i], b.X[i]) || !same(a.Y[i], b.Y[i]) || a.XMin[i] != b.XMin[i] || a.XMax[i] != b.XMax[i] ||
			a.YMin[i] != b.YMin[i] || a.YMax[i] != b.YMax[i] || !same(a.Max[i], b.Max[i]) {
			return fmt.Errorf("cluster %d differs", i)
		}
	}
	return nil
}

// againstSequential runs check on random cases of every generator and
// streamCase, with the sequential clusterer's output (members kept) to
// compare with.
func againstSequential(t *testing.T, seeds int, salt uint64,
	check func(t *testing.T, r *rand.Rand, seed int, cfg Config, h *Hits, seq *Clusterer, want *Clusters)) {
	gens := map[string]func(*rand.Rand) testCase{"stream": streamCase}
	maps.Copy(gens, generators)
	forEachCase(t, gens, seeds, salt, func(t *testing.T, r *rand.Rand, seed int, tc testCase, def Definition) {
		h := sortedHits(r, tc, r.IntN(2) == 0)
		cfg := Config{Definition: def, Dt: tc.dt, Width: tc.w, Height: tc.h, longSpan: randSpan(r)}
		seq, _ := NewClusterer(cfg)
		seq.KeepMembers(true)
		check(t, r, seed, cfg, h, seq, feed(r, seq, h))
	})
}

func TestParallelMatchesSequential(t *testing.T) {
	againstSequential(t, 150, 7, func(t *testing.T, r *rand.Rand, seed int, cfg Config, h *Hits, seq *Clusterer, want *Clusters) {
		workers, size := 1+r.IntN(4), 1+r.IntN(1+h.Len()/2)
		lanes, err := NewLanes(cfg, workers, size)
		if err != nil {
			t.Fatal(err)
		}
		lanes.check0 = 1 + r.IntN(64)
		lanes.KeepMembers(true)
		got := feed(r, lanes, h)
		if err := equalClusters(got, want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, %d workers, windows of %d, checkpoint %d): %v",
				seed, h.Len(), cfg.Dt, workers, size, lanes.check0, err)
		}
		if ls, ss := lanes.Stats(), seq.Stats(); ls != ss {
			t.Fatalf("seed %d: stats %+v, sequential %+v", seed, ls, ss)
		}
		if n := len(lanes.spaces.items); n > workers {
			t.Fatalf("seed %d: %d group spaces for %d workers", seed, n, workers)
		}
		for _, sp := range lanes.spaces.items {
			checkSpace(t, sp)
		}
		for _, c := range lanes.clusterers.items {
			if c.group.lent != nil || c.group.own != nil {
				t.Fatalf("seed %d: a lane's clusterer has a group space of its own or kept the one lent", seed)
			}
		}
		if cfg.Definition != Local {
			return
		}
		chunked, err := NewChunkedClusterer(cfg, workers, 1+r.IntN(1+h.Len()))
		if err != nil {
			t.Fatal(err)
		}
		chunked.chunk = 1 + r.IntN(200)
		chunked.KeepMembers(true)
		got = feed(r, chunked, h)
		if err := equalClusters(got, want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, %d workers, buffers of %d, chunks of %d): chunked: %v",
				seed, h.Len(), cfg.Dt, workers, chunked.size, chunked.chunk, err)
		}
		if cs, ss := chunked.Stats(), seq.Stats(); cs != ss {
			t.Fatalf("seed %d: chunked stats %+v, sequential %+v", seed, cs, ss)
		}
	})
}

// TestIsolatedMatchesMatrix: the isolated groups of a sparse stream give
// the same clusters, features, members and counts as the pixel matrix,
// with hits outside the sensor among them, whether members are kept or
// not.
func TestIsolatedMatchesMatrix(t *testing.T) {
	gens := map[string]func(*rand.Rand) testCase{"sparse": generators["sparse"], "stream": streamCase, "tracks": generators["tracks"]}
	forEachCase(t, gens, 300, 11, func(t *testing.T, r *rand.Rand, seed int, tc testCase, def Definition) {
		h := sortedHits(r, tc, r.IntN(2) == 0)
		for range r.IntN(4) { // hits outside the sensor, which the groups must not hide
			i := r.IntN(h.Len() + 1)
			var at Time
			if i > 0 {
				at = h.ToA[i-1]
			}
			with := &Hits{}
			with.AppendRange(h, 0, i)
			with.Append(uint16(tc.w+r.IntN(3)), uint16(r.IntN(tc.h+2)), at, 1<<16-1)
			if h.Calibrated() {
				with.E = append(with.E, 1)
			}
			with.AppendRange(h, i, h.Len())
			h = with
		}
		cfg := Config{Definition: def, Dt: tc.dt, Width: tc.w, Height: tc.h, longSpan: randSpan(r)}
		var outs [2]*Clusters
		var stats [2]Stats
		for k, matrix := range []bool{false, true} {
			c, _ := NewClusterer(cfg)
			c.KeepMembers(true)
			c.matrixOnly = matrix
			outs[k] = feed(rand.New(rand.NewPCG(uint64(seed), 1)), c, h)
			stats[k] = c.Stats()
		}
		if err := equalClusters(outs[0], outs[1]); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d): %v", seed, h.Len(), tc.dt, err)
		}
		if stats[0] != stats[1] {
			t.Fatalf("seed %d: stats %+v, matrix %+v", seed, stats[0], stats[1])
		}
		// Without members the groups sum their clusters in another way.
		bare, _ := NewClusterer(cfg)
		want := *outs[1]
		want.Members, want.Start = Hits{}, []int{0}
		if err := equalClusters(feed(rand.New(rand.NewPCG(uint64(seed), 1)), bare, h), &want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d), members not kept: %v", seed, h.Len(), tc.dt, err)
		}
	})
}

// TestSwitchMatchesSequential: a Switch asked at random for either mode
// gives the sequential clusters, features, members and counts, however
// often it changes.
func TestSwitchMatchesSequential(t *testing.T) {
	var changes [2]atomic.Int64 // to lanes, back
	// The subtests run in parallel, after this function has returned.
	t.Cleanup(func() {
		if !testing.Short() && (changes[0].Load() == 0 || changes[1].Load() == 0) {
			t.Errorf("changes to lanes %d, back %d: a path untested", changes[0].Load(), changes[1].Load())
		}
	})
	againstSequential(t, 100, 13, func(t *testing.T, r *rand.Rand, seed int, cfg Config, h *Hits, seq *Clusterer, want *Clusters) {
		s := randomSwitch(t, r, cfg, h.Len())
		was := s.Mode()
		got := feedWatching(r, s, h, func() {
			if m := s.Mode(); m != was {
				back := 0
				if m == Sequential {
					back = 1
				}
				changes[back].Add(1)
				was = m
			}
		})
		if err := equalClusters(got, want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, windows of %d): %v", seed, h.Len(), cfg.Dt, s.lanes.size, err)
		}
		if as, ss := s.Stats(), seq.Stats(); as != ss {
			t.Fatalf("seed %d: stats %+v, sequential %+v", seed, as, ss)
		}
	})
}

// randomlySwitched is a Switch asked for a random mode before some calls.
type randomlySwitched struct {
	*Switch
	r *rand.Rand
}

func (s randomlySwitched) AddTo(dst *Clusters, h *Hits) {
	if s.r.IntN(3) == 0 {
		s.Use([]Mode{Sequential, LanesMode}[s.r.IntN(2)])
	}
	s.Switch.AddTo(dst, h)
}

func (s randomlySwitched) Add(h *Hits) *Clusters {
	s.out.Reset()
	s.AddTo(&s.out, h)
	return &s.out
}

// randomSwitch returns a Switch for a stream of n hits, with random
// workers and windows, keeping members, that changes mode at random.
func randomSwitch(t *testing.T, r *rand.Rand, cfg Config, n int) randomlySwitched {
	s, err := NewSwitch(cfg, 1+r.IntN(3), 1+r.IntN(1+n/4))
	if err != nil {
		t.Fatal(err)
	}
	s.KeepMembers(true)
	return randomlySwitched{s, r}
}

// TestSwitchUse: a change waits for a gap, at once before the first hit,
// and asking for the mode in use cancels one waiting.
func TestSwitchUse(t *testing.T) {
	cfg := Config{Dt: 10, Width: 256, Height: 256}
	s, err := NewSwitch(cfg, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var h Hits
	h.Append(1, 1, 0, 1)
	h.Append(2, 1, 5, 1)
	if s.Use(LanesMode); s.Mode() != Sequential || s.Next() != LanesMode {
		t.Fatalf("before the first hit: mode %v, next %v", s.Mode(), s.Next())
	}
	total := s.Add(&h).Len()
	if s.Mode() != LanesMode || s.Next() != LanesMode {
		t.Fatalf("after the first hits: mode %v, next %v", s.Mode(), s.Next())
	}
	s.Use(Sequential)
	var near Hits
	near.Append(3, 1, 12, 1) // within dt of the latest hit: no gap
	total += s.Add(&near).Len()
	if s.Mode() != LanesMode || s.Next() != Sequential {
		t.Fatalf("without a gap: mode %v, next %v", s.Mode(), s.Next())
	}
	if s.Use(LanesMode); s.Next() != LanesMode {
		t.Fatalf("cancelled: next %v", s.Next())
	}
	s.Use(Sequential)
	var far Hits
	far.Append(3, 1, 100, 1)
	total += s.Add(&far).Len()
	if s.Mode() != Sequential {
		t.Fatalf("after a gap: mode %v", s.Mode())
	}
	// The first three hits are one cluster, the last another.
	if total += s.Flush().Len(); total != 2 || s.Stats().Hits != 4 || s.Stats().Clusters != 2 {
		t.Fatalf("%d clusters, stats %+v", total, s.Stats())
	}
}

// TestLanesMeetAfterLongCluster builds, hit by hit, the case where the
// order of the lanes' output rests on the clusters' keys rather than their
// first hits: a long cluster S (a hot pixel) starts in window 1 before a
// one-hit cluster P, and ends in window 2. Lane 0 goes on into window 1,
// meets lane 1 there once the cluster C across the border has closed, and
// emits C and P; lane 1 has no cluster of its own to send before them (its
// C and P are wrong, S is still open), so they wait until lane 1 meets
// lane 2 and emits S, which must come after P: it spans more than
// LongSpan hits and goes out in the place of its last hit.
func TestLanesMeetAfterLongCluster(t *testing.T) {
	var h Hits
	for i := range 14 { // window 0: single hits, far apart in time (dt is 10)
		h.Append(uint16(18*i), 50, Time(100*i), 1)
	}
	h.Append(10, 10, 2000, 2) // C, across the border of windows 0 and 1
	h.Append(10, 11, 2001, 3)
	h.Append(10, 12, 2002, 4)   // window 1 from here
	h.Append(100, 100, 2002, 5) // S
	h.Append(200, 200, 2002, 6) // P
	h.Append(100, 100, 2011, 7)
	t0 := Time(2019)
	for i := range 14 { // S to the second hit of window 2
		h.Append(100, 100, t0+Time(8*i), 8)
	}
	for i := range 14 { // the rest of window 2: single hits again
		h.Append(uint16(18*i), 150, t0+Time(8*13+100*(i+1)), 9)
	}
	if h.Len() != 48 {
		t.Fatalf("%d hits", h.Len())
	}
	cfg := Config{Definition: Local, Dt: 10, Width: 256, Height: 256, longSpan: 4}
	seq, _ := NewClusterer(cfg)
	want := &Clusters{}
	want.Reset()
	seq.AddTo(want, &h)
	seq.FlushTo(want)
	// C, P and S, in that order, S keyed by its last hit (33).
	if want.Len() != 14+3+14 || want.root[14] != 14 || want.root[15] != 18 || want.root[16] != 17 || want.key[16] != 33 {
		t.Fatalf("sequential: %d clusters, roots %v, keys %v", want.Len(), want.root, want.key)
	}
	for range 20 {
		lanes, _ := NewLanes(cfg, 2, 16)
		lanes.check0 = 1
		var all Clusters
		all.Reset()
		lanes.AddTo(&all, &h)
		lanes.FlushTo(&all)
		if err := equalClusters(&all, want); err != nil {
			t.Fatalf("lanes: %v; roots %v, want %v", err, all.root, want.root)
		}
	}
}

// TestChunkedWideDt: with a dt spanning many more hits than a chunk, and
// than a buffer takes, the chunked clusterer still gives the sequential
// clusters, each border looks only at the chunks on either side of it
// (the pairs it finds are at most nine per hit of the chunk after it),
// and a buffer takes about as many new hits as it carries, not the few
// it was set to: else the carried hits are clustered again and again.
func TestChunkedWideDt(t *testing.T) {
	const n = 20000
	r := rand.New(rand.NewPCG(3, 4))
	var h Hits
	for i := range n { // 20 hits per dt on a tiny sensor: clusters never end
		h.Append(uint16(r.IntN(4)), uint16(r.IntN(4)), Time(i)*50+Time(r.IntN(50)), uint16(1+r.IntN(9)))
	}
	cfg := Config{Definition: Local, Dt: 1000, Width: 4, Height: 4}
	seq, _ := NewClusterer(cfg)
	want := feed(rand.New(rand.NewPCG(1, 2)), seq, &h)
	c, _ := NewChunkedClusterer(cfg, 2, 8)
	c.chunk = 4
	var got Clusters
	got.Reset()
	buffers := 0
	for i := range n {
		before, carried := c.buf.Len(), c.carried
		c.AddTo(&got, h.view(i, i+1))
		if c.buf.Len() == before+1 && c.carried == carried {
			continue // no buffer clustered
		}
		buffers++
		for k := 0; k+2 < len(c.bounds); k++ {
			if pairs, most := len(c.pairs[k])/2, 9*(c.bounds[k+2]-c.bounds[k+1]); pairs > most {
				t.Fatalf("border %d: %d pairs, want at most %d", k, pairs, most)
			}
		}
	}
	c.FlushTo(&got)
	if err := equalClusters(&got, want); err != nil {
		t.Fatal(err)
	}
	if buffers > n/16 { // at least 16 new hits a buffer
		t.Fatalf("%d buffers for %d hits", buffers, n)
	}
}

// TestLanesBoundTheirOutput: a caller feeding many windows at once (or
// held up by its writer) finds at most a few windows of clusters waiting
// in the lanes' output, not every window in flight: the assembler waits
// for the caller to take them. A goroutine watches the output's length
// during the calls; with one-hit clusters a window is that many clusters.
func TestLanesBoundTheirOutput(t *testing.T) {
	const size, windows = 1000, 60
	var h Hits
	for i := range windows * size {
		h.Append(uint16(i%256), uint16(i/256%256), Time(i)*Microsecond, 1)
	}
	l, _ := NewLanes(DefaultConfig(), 2, size)
	var most atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			l.assembledMu.Lock()
			n := int64(l.assembled.Len())
			l.assembledMu.Unlock()
			if n > most.Load() {
				most.Store(n)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	var all Clusters
	all.Reset()
	for i := 0; i < h.Len(); i += 20 * size {
		l.AddTo(&all, h.view(i, i+20*size))
	}
	l.FlushTo(&all)
	close(stop)
	<-watched
	if all.Len() != h.Len() || all.ID[all.Len()-1] != int64(h.Len()-1) {
		t.Fatalf("%d clusters, want %d", all.Len(), h.Len())
	}
	// A push after the assembler's last look adds a window's clusters and
	// those pending from the lane before (a window at most).
	if n := most.Load(); n > 3*size {
		t.Fatalf("%d clusters waited in the output, more than 3 windows", n)
	}
}

// TestIsolatedBecomesCalibrated: a stream whose energies start midway
// (the isolated groups write their clusters a run at a time only while
// the stream is uncalibrated) gives the matrix's clusters and features.
func TestIsolatedBecomesCalibrated(t *testing.T) {
	gens := map[string]func(*rand.Rand) testCase{"sparse": generators["sparse"], "tracks": generators["tracks"]}
	forEachCase(t, gens, 100, 12, func(t *testing.T, r *rand.Rand, seed int, tc testCase, def Definition) {
		h := sortedHits(r, tc, true)
		m := r.IntN(h.Len() + 1)
		before := &Hits{}
		before.AppendRange(h, 0, m)
		before.E = nil
		cfg := Config{Definition: def, Dt: tc.dt, Width: tc.w, Height: tc.h}
		var outs [2]*Clusters
		for k, matrix := range []bool{false, true} {
			c, _ := NewClusterer(cfg)
			c.matrixOnly = matrix
			var all Clusters
			all.Reset()
			c.AddTo(&all, before)
			c.AddTo(&all, h.view(m, h.Len()))
			c.FlushTo(&all)
			outs[k] = &all
		}
		if err := equalClusters(outs[0], outs[1]); err != nil {
			t.Fatalf("seed %d (%d hits, calibrated from %d): %v", seed, h.Len(), m, err)
		}
		if h.Len() > m && !outs[0].Calibrated {
			t.Fatalf("seed %d: clusters not calibrated", seed)
		}
	})
}
