package pixel

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

// TestFoldingMatchesSequential: clusterers that fold long clusters often
// (the sequential one and the lanes', whose folded states cannot be
// compared) give the clusters, features and counts of the sequential
// clusterer keeping every hit. Fails if no case folded anything.
func TestFoldingMatchesSequential(t *testing.T) {
	var folded atomic.Int64
	t.Cleanup(func() {
		if n := folded.Load(); n&(1<<32-1) == 0 || n>>32 == 0 {
			t.Errorf("folded clusters seen %d times sequentially, %d chunked: a path untested", n&(1<<32-1), n>>32)
		}
	})
	againstSequential(t, 150, 17, func(t *testing.T, r *rand.Rand, seed int, cfg Config, h *Hits, seq *Clusterer, members *Clusters) {
		want := *members
		want.Members, want.Start = Hits{}, []int{0}
		c, _ := NewClusterer(cfg)
		c.foldAt = 1 + r.IntN(64)
		got := feedWatching(r, c, h, func() {
			if len(c.folds) > 0 {
				folded.Add(1)
			}
			checkBuffer(t, c)
		})
		if err := equalClusters(got, &want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, fold at %d): %v", seed, h.Len(), cfg.Dt, c.foldAt, err)
		}
		if len(c.folds) != 0 {
			t.Fatalf("seed %d: %d folded sums left after the flush", seed, len(c.folds))
		}
		if cs, ss := c.Stats(), seq.Stats(); cs != ss {
			t.Fatalf("seed %d: stats %+v, sequential %+v", seed, cs, ss)
		}
		workers, size := 1+r.IntN(4), 1+r.IntN(1+h.Len()/2)
		lanes, err := NewLanes(cfg, workers, size)
		if err != nil {
			t.Fatal(err)
		}
		lanes.check0, lanes.foldAt = 1+r.IntN(64), 1+r.IntN(64)
		if err := equalClusters(feed(r, lanes, h), &want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, %d workers, windows of %d, checkpoint %d, fold at %d): lanes: %v",
				seed, h.Len(), cfg.Dt, workers, size, lanes.check0, lanes.foldAt, err)
		}
		if ls, ss := lanes.Stats(), seq.Stats(); ls != ss {
			t.Fatalf("seed %d: lanes stats %+v, sequential %+v", seed, ls, ss)
		}
		if cfg.Definition != Local {
			return
		}
		chunked, err := NewChunkedClusterer(cfg, workers, 1+r.IntN(1+h.Len()/4))
		if err != nil {
			t.Fatal(err)
		}
		chunked.chunk, chunked.foldMin = 1+r.IntN(200), 1+r.IntN(64)
		got = feedWatching(r, chunked, h, func() {
			if slices.ContainsFunc(chunked.folds, func(f *foldedSums) bool { return f != nil }) {
				folded.Add(1 << 32)
			}
		})
		if err := equalClusters(got, &want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, %d workers, buffers of %d, chunks of %d, fold from %d): chunked: %v",
				seed, h.Len(), cfg.Dt, workers, chunked.size, chunked.chunk, chunked.foldMin, err)
		}
		if cs, ss := chunked.Stats(), seq.Stats(); cs != ss {
			t.Fatalf("seed %d: chunked stats %+v, sequential %+v", seed, cs, ss)
		}
	})
}

// boundedStream is a clusterer that folds, with the hits it holds and the
// most it may hold.
type boundedStream struct {
	Stream
	buffered func() int
	most     int
}

// foldingStreams returns the clusterers that fold, sequential and (local
// definition) chunked, set to fold early, with the bound on the hits they
// hold for a stream where no cluster but one spans more than
// cfg.longSpan hits (any when it is 0).
func foldingStreams(cfg Config) []boundedStream {
	const foldAt, foldMin, buffer = 1000, 100, 1000
	span := int(cfg.longSpan)
	c, _ := NewClusterer(cfg)
	c.foldAt = foldAt
	streams := []boundedStream{{c, func() int { return len(c.nodes) }, span + 2*foldAt + 2*emitEvery}}
	if cfg.Definition == Local {
		chunked, _ := NewChunkedClusterer(cfg, 2, buffer)
		chunked.foldMin = foldMin
		streams = append(streams, boundedStream{chunked, func() int { return chunked.buf.Len() + chunked.pending.Len() }, span + buffer + foldMin})
	}
	return streams
}

// TestFoldingBoundsMemory: a hot pixel firing faster than dt, next to a
// pixel that fires now and then, is one cluster that never closes. The
// buffers stay within a bound set by the fold threshold, whatever the
// length, and the cluster's features are exact.
func TestFoldingBoundsMemory(t *testing.T) {
	const n = 300_000
	var h Hits
	var totSum int64
	for i := range n {
		x, tot := uint16(1), uint16(i%7+1)
		if i%100 == 0 {
			x, tot = 2, 50
		}
		h.Append(x, 2, Time(i)*400, tot)
		totSum += int64(tot)
	}
	h.E = make([]float32, n)
	var esum, ex float64
	for i := range h.E {
		h.E[i] = float32(i%3) * 0.25 // exact in binary: so are the sums
		esum, ex = esum+float64(h.E[i]), ex+float64(h.E[i])*float64(h.X[i])
	}
	for _, def := range []Definition{Local, Global} {
		for _, s := range foldingStreams(Config{Definition: def, Dt: 1000, Width: 4, Height: 4}) {
			most := 0
			for i := 0; i < n; i += 1000 {
				if out := s.Add(h.view(i, i+1000)); out.Len() != 0 {
					t.Fatalf("%T, %v: %d clusters emitted while the hot pixel fires", s.Stream, def, out.Len())
				}
				most = max(most, s.buffered())
			}
			if most > s.most {
				t.Fatalf("%T, %v: %d hits buffered, want at most %d", s.Stream, def, most, s.most)
			}
			out := s.Flush()
			if out.Len() != 1 || out.Size[0] != n || out.FirstToA[0] != 0 || out.LastToA[0] != Time(n-1)*400 ||
				out.ToTSum[0] != totSum || out.XMin[0] != 1 || out.XMax[0] != 2 || out.YMin[0] != 2 || out.YMax[0] != 2 ||
				out.ESum[0] != esum || out.X[0] != ex/esum || out.Y[0] != 2 || out.Max[0] != 0.5 {
				t.Fatalf("%T, %v: got %d clusters, the first %+v", s.Stream, def, out.Len(), out)
			}
		}
	}
}

// TestFoldingKeepsWhatLateHitsFind: a late hit joins the hits the matrix
// shows, the last on each pixel, however old; both clusterers that fold
// keep them, and cluster the late hit as without folding.
func TestFoldingKeepsWhatLateHitsFind(t *testing.T) {
	cfg := Config{Definition: Local, Dt: 1000, Width: 8, Height: 8}
	var h Hits
	for i := range 5000 {
		h.Append(4, 4, Time(i)*400, 2)
		switch i {
		case 0: // next to the hot pixel, once
			h.Append(3, 3, 200, 1)
		case 3000: // late, next to that hit only
			h.Append(2, 2, 500, 3)
		}
	}
	seq, _ := NewClusterer(cfg)
	want := feed(rand.New(rand.NewPCG(1, 2)), seq, &h)
	if want.Len() != 1 || want.Size[0] != 5002 || seq.Stats().Late != 1 {
		t.Fatalf("sequential: %d clusters, the first of %d hits, stats %+v", want.Len(), want.Size[0], seq.Stats())
	}
	folding, _ := NewClusterer(cfg)
	folding.foldAt = 16
	if err := equalClusters(feed(rand.New(rand.NewPCG(1, 2)), folding, &h), want); err != nil {
		t.Fatalf("sequential, folding: %v", err)
	}
	chunked, _ := NewChunkedClusterer(cfg, 2, 1000)
	chunked.chunk, chunked.foldMin = 1<<20, 16
	if err := equalClusters(feed(rand.New(rand.NewPCG(1, 2)), chunked, &h), want); err != nil {
		t.Fatal(err)
	}
	if cs, ss := chunked.Stats(), seq.Stats(); cs != ss {
		t.Fatalf("stats %+v, sequential %+v", cs, ss)
	}
}

// TestLongClusterHoldsBackLittle: clusters starting while a hot pixel
// fires go out while it goes on, once it spans more than LongSpan hits,
// and it comes in the place of its last hit; the buffers stay within a
// bound set by LongSpan. So they do for a clusterer keeping the hits,
// which holds all of the hot pixel's.
func TestLongClusterHoldsBackLittle(t *testing.T) {
	const n, span = 200_000, 5000
	var h Hits
	hotLast, background, place := 0, 0, 0
	for i := range n + 500 {
		if i < n { // the hot pixel, then quiet
			hotLast = h.Len()
			h.Append(1, 2, Time(i)*400, 1)
		}
		if i%7 == 3 { // a one-hit cluster away from it
			h.Append(3, 0, Time(i)*400+1, 2)
			background++
			if i < n { // before the hot cluster's last hit: before it
				place++
			}
		}
	}
	for _, def := range []Definition{Local, Global} {
		cfg := Config{Definition: def, Dt: 1000, Width: 4, Height: 4, longSpan: span}
		keeping, _ := NewClusterer(cfg)
		keeping.KeepMembers(true)
		streams := append(foldingStreams(cfg), boundedStream{keeping, func() int { return len(keeping.nodes) - keeping.dead }, n + 2*span})
		for _, s := range streams {
			var all Clusters
			all.Reset()
			most := 0
			for i := 0; i < h.Len(); i += 1000 {
				s.AddTo(&all, h.view(i, min(h.Len(), i+1000)))
				most = max(most, s.buffered())
				if i > 4*span && all.Len() == 0 {
					t.Fatalf("%T, %v: no cluster out after %d hits", s.Stream, def, i)
				}
			}
			if most > s.most {
				t.Fatalf("%T, %v: %d hits buffered, want at most %d", s.Stream, def, most, s.most)
			}
			s.FlushTo(&all)
			if all.Len() != background+1 {
				t.Fatalf("%T, %v: %d clusters, want %d", s.Stream, def, all.Len(), background+1)
			}
			for k := range all.Len() {
				hot := all.Size[k] != 1
				if hot != (k == place) || hot && (all.Size[k] != n || all.root[k] != 0 || all.key[k] != int64(hotLast)) {
					t.Fatalf("%T, %v: cluster %d of %d hits (root %d, key %d); the hot one is %d, of %d hits, last hit %d",
						s.Stream, def, k, all.Size[k], all.root[k], all.key[k], place, n, hotLast)
				}
			}
		}
	}
}

// TestFoldingWideDt: with a dt longer than the stream every hit can reach
// the next ones, but only through the last hit on its pixel; the chunked
// clusterer carries no more than those and the root, and clusters as the
// sequential one does.
func TestFoldingWideDt(t *testing.T) {
	const n = 100_000
	r := rand.New(rand.NewPCG(5, 6))
	var h Hits
	for i := range n {
		h.Append(uint16(r.IntN(4)), uint16(r.IntN(4)), Time(i)*10, uint16(1+r.IntN(9)))
	}
	if most, _ := chunkedCarrying(t, &h, 4, 100, 1); most > 1+4*4 {
		t.Fatalf("%d hits carried", most)
	}
}

// TestFoldingManyOpenClusters: pixels apart from each other each fire
// within a dt longer than the stream, making many clusters that never end,
// each smaller than the chunked clusterer's fold threshold. What it
// carries stays within two buffers, and it clusters as the sequential
// clusterer does.
func TestFoldingManyOpenClusters(t *testing.T) {
	const rounds = 3000
	var h Hits
	t0 := Time(0)
	for range rounds {
		for y := 0; y < 16; y += 2 {
			for x := 0; x < 16; x += 2 {
				h.Append(uint16(x), uint16(y), t0, uint16(1+x+y))
				t0 += 7
			}
		}
	}
	if most, last := chunkedCarrying(t, &h, 16, 0, 64); most > 2*1000 || last > 2*64 {
		t.Fatalf("%d hits carried at most, %d at the end; want at most %d and %d", most, last, 2*1000, 2*64)
	}
}

// chunkedCarrying clusters h, on a square sensor of the given side with
// a dt longer than the stream, sequentially and with a chunked clusterer
// of 1000-hit buffers (folding from foldMin carried hits, 0 for the
// default) fed 500 hits at a time. Both must give the same clusters, as
// many as given, each of an equal share of the hits. It returns the most
// hits the chunked clusterer carried between two calls, and at the end.
func chunkedCarrying(t *testing.T, h *Hits, side, foldMin, clusters int) (most, last int) {
	t.Helper()
	cfg := Config{Definition: Local, Dt: 1 << 40, Width: side, Height: side}
	seq, _ := NewClusterer(cfg)
	want := feed(rand.New(rand.NewPCG(1, 2)), seq, h)
	if want.Len() != clusters || int(want.Size[0]) != h.Len()/clusters {
		t.Fatalf("sequential: %d clusters, the first of %d hits", want.Len(), want.Size[0])
	}
	c, _ := NewChunkedClusterer(cfg, 2, 1000)
	if foldMin > 0 {
		c.foldMin = foldMin
	}
	var got Clusters
	got.Reset()
	for i := 0; i < h.Len(); i += 500 {
		c.AddTo(&got, h.view(i, min(h.Len(), i+500)))
		most = max(most, c.carried)
	}
	last = c.carried
	c.FlushTo(&got)
	if err := equalClusters(&got, want); err != nil {
		t.Fatal(err)
	}
	return most, last
}

// TestMemberLimit: keeping members, every mode reports a cluster that
// never ends once the hits held pass the limit, naming its pixel, without
// holding much more before, and goes on clustering exactly; without
// members, or on a stream whose clusters end, none reports.
func TestMemberLimit(t *testing.T) {
	const n, limit, dt = 20_000, 3000, 1000
	// A few hits far apart in time, then a hot pixel firing faster than
	// dt and now and then a hit far from it: one-hit clusters held back
	// behind the endless one.
	var hot, calm Hits
	for i := range 150 {
		hot.Append(uint16(i), 100, Time(2*dt*i), 2)
	}
	for i := range n {
		hot.Append(5, 6, Time(1_000_000+400*i), 3)
		if i%10 == 0 {
			hot.Append(uint16(100+i%50), 200, Time(1_000_100+400*i), 4)
		}
		calm.Append(uint16(i%200), uint16(i%7*30), Time(1000+2000*i), 3)
	}
	r := rand.New(rand.NewPCG(3, 4))
	// Under the window definition every cluster ends within dt.
	for _, def := range []Definition{Local, Global} {
		cfg := Config{Definition: def, Dt: dt, Width: 256, Height: 256, MemberLimit: limit}
		ref, _ := NewClusterer(Config{Definition: def, Dt: dt, Width: 256, Height: 256})
		ref.KeepMembers(true)
		want := feed(r, ref, &hot)
		if ref.Err() != nil || want.Len() != 150+1+n/10 || want.Size[150] != n {
			t.Fatalf("%v: reference: error %v, %d clusters, the endless one of %d hits", def, ref.Err(), want.Len(), want.Size[150])
		}
		// The streams, with what each holds for its clusters and the most
		// it may hold unreported (the lanes report asynchronously).
		type bounded struct {
			Stream
			held func() (n, most int)
		}
		streams := func() []bounded {
			seq, _ := NewClusterer(cfg)
			// Windows so short that no lane but the one holding the cluster
			// from its start reaches the limit: a lane runs at most the
			// windows in flight ahead.
			lanes, _ := NewLanes(cfg, 2, limit/8)
			// And one window longer than the stream, clustered at the flush.
			long, _ := NewLanes(cfg, 2, 0)
			// A Switch on lanes, which must report through it (the
			// sequential clusterer reports the same way).
			auto, _ := NewSwitch(cfg, 2, limit/8)
			auto.Use(LanesMode)
			none := func() (int, int) { return 0, 0 }
			s := []bounded{
				{seq, func() (int, int) { return len(seq.nodes) - seq.dead, limit + emitEvery }},
				{lanes, none}, {long, none}, {auto, none}}
			if def == Local {
				chunked, _ := NewChunkedClusterer(cfg, 2, 600)
				s = append(s, bounded{chunked, func() (int, int) {
					return chunked.buf.Len() + chunked.pending.Members.Len(), limit + chunked.size
				}})
			}
			return s
		}
		for _, s := range streams() {
			s.KeepMembers(true)
			got := feedWatching(r, s, &hot, func() {
				if n, most := s.held(); s.Err() == nil && n > most {
					t.Fatalf("%v, %T: %d hits held unreported", def, s.Stream, n)
				}
			})
			var e *MemberLimitError
			if !errors.As(s.Err(), &e) {
				t.Fatalf("%v, %T: error %v, want a MemberLimitError", def, s.Stream, s.Err())
			}
			if e.Limit != limit || e.X != 5 || e.Y != 6 || 2*e.PixelHits <= limit || e.PixelHits > n {
				t.Fatalf("%v, %T: %+v", def, s.Stream, e)
			}
			if a, ok := s.Stream.(*Switch); ok && a.Mode() != LanesMode {
				t.Fatalf("%v: switch on %v, not lanes", def, a.Mode())
			}
			if err := equalClusters(got, want); err != nil {
				t.Fatalf("%v, %T: %v", def, s.Stream, err)
			}
		}
		for _, s := range streams() {
			feed(r, s, &hot)
			if s.Err() != nil {
				t.Fatalf("%v, %T: members not kept: %v", def, s.Stream, s.Err())
			}
		}
		for _, s := range streams() {
			s.KeepMembers(true)
			if feed(r, s, &calm); s.Err() != nil {
				t.Fatalf("%v, %T: clusters that end: %v", def, s.Stream, s.Err())
			}
		}
	}
}
