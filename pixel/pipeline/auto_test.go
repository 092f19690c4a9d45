package pipeline

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// simulatedHits returns n simulated hits of the dataset in one batch.
func simulatedHits(t *testing.T, dataset string, n int, seed uint64, rateMHz float64) *pixel.Hits {
	t.Helper()
	d, err := pixelsim.DatasetByName(dataset)
	if err != nil {
		t.Fatal(err)
	}
	all := &pixel.Hits{}
	err = pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: n, Seed: seed, RateMHz: rateMHz}, func(h *pixel.Hits) error {
		all.AppendRange(h, 0, h.Len())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// feed gives s the hits in random batches, calling watch after each, and
// returns every cluster.
func feed(r *rand.Rand, s pixel.Stream, h *pixel.Hits, watch func()) *pixel.Clusters {
	all := &pixel.Clusters{}
	all.Reset()
	for i := 0; i < h.Len(); {
		j := min(h.Len(), i+1+r.IntN(1+h.Len()/8))
		var b pixel.Hits
		b.AppendRange(h, i, j)
		s.AddTo(all, &b)
		if watch != nil {
			watch()
		}
		i = j
	}
	s.FlushTo(all)
	return all
}

// sequential clusters h with the sequential clusterer, keeping members.
func sequential(t *testing.T, cfg pixel.Config, h *pixel.Hits) (*pixel.Clusters, pixel.Stats) {
	seq, err := pixel.NewClusterer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seq.KeepMembers(true)
	want := feed(rand.New(rand.NewPCG(0, 0)), seq, h, nil)
	return want, seq.Stats()
}

// randomAuto returns an auto stream for a stream of n hits with short
// random trials, intervals between them and windows, timed by a clock
// that makes either mode look faster at random, keeping members.
func randomAuto(t *testing.T, r *rand.Rand, cfg pixel.Config, n int) *autoStream {
	a, err := newAutoStream(cfg, 1+r.IntN(3), 1+r.IntN(1+n/4))
	if err != nil {
		t.Fatal(err)
	}
	a.warm, a.trial, a.recheck = int64(r.IntN(1+n/8)), int64(1+r.IntN(1+n/4)), int64(r.IntN(1+n/2))
	var now time.Time
	a.clock = func() time.Time {
		now = now.Add(time.Duration(1+r.IntN(5)) * time.Millisecond)
		return now
	}
	// The cores look busy in some sequential trials, which then skip
	// the lanes' trial, and idle in others; or the time is not known.
	a.cpu = func() time.Duration {
		if r.IntN(8) == 0 {
			return -1
		}
		return time.Duration(r.Float64() * 1.5 * float64(a.procs) * float64(now.Sub(time.Time{})))
	}
	// The clusterer bounds the run in most streams (its calls take all
	// the time, and more), and waits for the rest of it in the others
	// (its calls take none), which then skip the lanes' trial too.
	bound := r.IntN(4) != 0
	var calls int
	var inCalls time.Time
	a.callClock = func() time.Time {
		if calls++; bound && calls%2 == 0 {
			inCalls = inCalls.Add(time.Hour)
		}
		return inCalls
	}
	a.KeepMembers(true)
	return a
}

// TestAutoMatchesSequential: the auto mode, timing both clusterers on
// short trials with a clock that makes either look faster, gives the
// sequential clusters, features, members and counts, whichever it keeps
// and however often it changes.
func TestAutoMatchesSequential(t *testing.T) {
	var changes, kept [2]int // to lanes, back; lanes kept, sequential kept
	datasets := []string{"gamma", "pion45", "pion75", "pb0"}
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 13))
		cfg := pixel.DefaultConfig()
		cfg.Definition = []pixel.Definition{pixel.Local, pixel.Global, pixel.Window}[r.IntN(3)]
		h := simulatedHits(t, datasets[r.IntN(len(datasets))], 2000+r.IntN(30000), uint64(seed), 0.5+r.Float64()*5)
		want, wantStats := sequential(t, cfg, h)
		a := randomAuto(t, r, cfg, h.Len())
		was := a.Mode()
		got := feed(r, a, h, func() {
			if m := a.Mode(); m != was {
				changes[b2i(m == pixel.Sequential)]++
				was = m
			}
		})
		if a.phase == decided {
			kept[b2i(a.Next() == pixel.Sequential)]++
		}
		fixture.SameClusters(t, "auto", got, want, true)
		if st := a.Stats(); st != wantStats {
			t.Fatalf("seed %d: stats %+v, sequential %+v", seed, st, wantStats)
		}
		a.Close()
	}
	if !testing.Short() && (changes[0] == 0 || changes[1] == 0 || kept[0] == 0 || kept[1] == 0) {
		t.Errorf("changes to lanes %d, back %d; lanes kept %d, sequential kept %d: a path untested",
			changes[0], changes[1], kept[0], kept[1])
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAutoSkipsFutileLanes: when the process kept every core busy in the
// sequential trial, or the clusterer waited for the rest of the run much
// of the time, auto mode keeps the sequential clusterer without trying
// lanes; with a core idle and the clustering the bound, or the CPU time
// unknown, it tries them.
func TestAutoSkipsFutileLanes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cfg := pixel.DefaultConfig()
	h := simulatedHits(t, "gamma", 20000, 3, 2)
	want, _ := sequential(t, cfg, h)
	for _, tc := range []struct {
		share     float64 // of every core the process uses
		inCalls   float64 // share of the time the clusterer spends in its calls
		unknown   bool    // the CPU time is not known
		skipLanes bool
	}{
		{0.9, 1, false, true}, {busyShare, 1, false, true}, {0.7, 1, false, false},
		{0.5, 0.8, false, true}, {0.5, 0.95, false, false},
		{0.9, 1, true, false},
	} {
		a, err := newAutoStream(cfg, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		a.KeepMembers(true)
		a.procs, a.warm, a.trial = 2, 100, 1000
		// Each call of the clusterer takes inCalls of a second, after the
		// rest of it outside. A clock that does not move (too coarse)
		// must not make the lanes look futile when the CPU time is
		// unknown.
		var now time.Duration
		in, out := time.Duration(tc.inCalls*float64(time.Second)), time.Duration((1-tc.inCalls)*float64(time.Second))
		if tc.unknown {
			in, out = 0, 0
		}
		calls := 0
		a.callClock = func() time.Time {
			if calls++; calls%2 == 1 {
				now += out
			} else {
				now += in
			}
			return time.Unix(1e9, 0).Add(now)
		}
		a.clock = func() time.Time { return time.Unix(1e9, 0).Add(now) }
		a.cpu = func() time.Duration {
			if tc.unknown {
				return -1
			}
			return time.Duration(tc.share * 2 * float64(now))
		}
		triedLanes := false
		got := feed(r, a, h, func() { triedLanes = triedLanes || a.Mode() == pixel.LanesMode })
		fixture.SameClusters(t, "auto", got, want, true)
		if triedLanes == tc.skipLanes || a.Next() != pixel.Sequential && tc.skipLanes {
			t.Errorf("%+v: tried lanes %v, next %v, phase %d", tc, triedLanes, a.Next(), a.phase)
		}
	}
}

// TestAbandonedStreamsLeaveNoGoroutine: a stream of every mode given hits
// and then closed without its Flush, as a cancelled run leaves it, ends
// every goroutine it started.
func TestAbandonedStreamsLeaveNoGoroutine(t *testing.T) {
	h := simulatedHits(t, "pion45", 300000, 5, 20)
	before := runtime.NumGoroutine()
	for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked, pixel.Auto} {
		s, err := NewStream(pixel.DefaultConfig(), mode, 4)
		if err != nil {
			t.Fatal(err)
		}
		s.KeepMembers(true)
		for lo := 0; lo < h.Len()/2; lo += 10000 {
			var b pixel.Hits
			b.AppendRange(h, lo, lo+10000)
			s.Add(&b)
		}
		if mode == pixel.LanesMode && runtime.NumGoroutine() <= before {
			t.Fatal("lanes in flight run no goroutine: the test would not see one left")
		}
		s.Close()
		if err := settled(before); err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
	}
}

// settled waits a little for the goroutines to be back to n.
func settled(n int) error {
	for range 100 {
		if runtime.NumGoroutine() <= n {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	return fmt.Errorf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
}
