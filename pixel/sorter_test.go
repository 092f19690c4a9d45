package pixel

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// disordered returns hits in a readout order in which each hit is delayed
// by up to window, with its input index in ToT.
func disordered(r *rand.Rand, tc testCase, window Time) *Hits {
	type item struct {
		i   int
		key Time
	}
	items := make([]item, len(tc.hits))
	for i, h := range tc.hits {
		items[i] = item{i, h.t + Time(r.Int64N(int64(window)+1))}
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.key, b.key) })
	var h Hits
	for _, it := range items {
		hh := tc.hits[it.i]
		h.Append(uint16(hh.x), uint16(hh.y), hh.t, uint16(it.i))
	}
	return &h
}

// sortStream pushes h through a sorter in random batches of up to most
// hits, taking the hits released by Push or, appended to the earlier ones,
// by PushTo.
func sortStream(r *rand.Rand, s *Sorter, h *Hits, most int) *Hits {
	var out Hits
	for i := 0; i < h.Len(); {
		j := min(h.Len(), i+1+r.IntN(most))
		var b Hits
		b.AppendRange(h, i, j)
		if r.IntN(2) == 0 {
			o := s.Push(&b)
			out.AppendRange(o, 0, o.Len())
		} else {
			s.PushTo(&out, &b)
		}
		i = j
	}
	if r.IntN(2) == 0 {
		o := s.Flush()
		out.AppendRange(o, 0, o.Len())
	} else {
		s.FlushTo(&out)
	}
	return &out
}

func TestSorterRestoresOrder(t *testing.T) {
	for seed := range 200 {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		tc := generators["uniform"](r)
		window := Time(r.Int64N(int64(tc.dt)*4 + 2))
		in := disordered(r, tc, window)
		if seed%2 == 1 { // energies travel with their hits
			for _, i := range in.ToT {
				in.E = append(in.E, float32(i)+0.5)
			}
		}
		out := sortStream(r, mustSorter(t, window), in, 200)
		if out.Len() != in.Len() || !slices.IsSorted(out.ToA) {
			t.Fatalf("seed %d: %d of %d hits out, sorted %v", seed, out.Len(), in.Len(), slices.IsSorted(out.ToA))
		}
		if out.Calibrated() != in.Calibrated() {
			t.Fatalf("seed %d: calibrated %v in, %v out", seed, in.Calibrated(), out.Calibrated())
		}
		for i := range out.E {
			if out.E[i] != float32(out.ToT[i])+0.5 {
				t.Fatalf("seed %d: hit %d has the energy %v of another", seed, out.ToT[i], out.E[i])
			}
		}
		// Stable: equal times keep their readout order.
		for i := 1; i < out.Len(); i++ {
			if out.ToA[i] == out.ToA[i-1] && slices.Index(in.ToT, out.ToT[i]) < slices.Index(in.ToT, out.ToT[i-1]) {
				t.Fatalf("seed %d: equal times reordered", seed)
			}
		}
		// Clustering the sorted stream gives the reference partition.
		c, _ := NewClusterer(Config{Definition: Local, Dt: tc.dt, Width: tc.w, Height: tc.h})
		c.KeepMembers(true)
		got := make([]int, len(tc.hits))
		label := func(cl *Clusters) {
			for k := range cl.Len() {
				m := slices.Min(cl.Members.ToT[cl.Start[k]:cl.Start[k+1]])
				for _, i := range cl.Members.ToT[cl.Start[k]:cl.Start[k+1]] {
					got[i] = int(m)
				}
			}
		}
		label(c.Add(out))
		label(c.Flush())
		if want := refLocal(tc.hits, tc.dt); !slices.Equal(got, want) {
			t.Fatalf("seed %d: partition differs after sorting", seed)
		}
		if c.Stats().Late != 0 {
			t.Fatalf("seed %d: %d late hits in a window-ordered stream", seed, c.Stats().Late)
		}
	}
}

// TestLateHits: a stream more disordered than the window yields late hits,
// counted by the clusterer, none lost, and each still in a cluster.
func TestLateHits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	tc := generators["pileup"](r)
	tc.dt = 200 * Nanosecond
	in := disordered(r, tc, 2*Microsecond)
	s := mustSorter(t, 10*Nanosecond)
	out := sortStream(r, s, in, 200)
	c, _ := NewClusterer(Config{Definition: Global, Dt: tc.dt, Width: tc.w, Height: tc.h})
	c.KeepMembers(true)
	seen := make([]int, len(tc.hits))
	var clusters int
	count := func(cl *Clusters) {
		clusters += cl.Len()
		for _, i := range cl.Members.ToT {
			seen[i]++
		}
	}
	count(c.Add(out))
	checkBuffer(t, c)
	count(c.Flush())
	checkBuffer(t, c)
	st := c.Stats()
	late := 0
	maxT := Time(-1 << 62)
	for _, t0 := range out.ToA {
		if t0 < maxT {
			late++
		}
		maxT = max(maxT, t0)
	}
	if st.Late == 0 || st.Late != int64(late) || st.Hits != int64(len(tc.hits)) || int64(clusters) != st.Clusters {
		t.Fatalf("stats %+v, %d late in the stream", st, late)
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("hit %d emitted %d times", i, n)
		}
	}
}

func TestSortByTime(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s timeSort
	// Times on the Timepix3 grid (multiples of 100 units) take the keys
	// divided by 25 and by the common power of two; times off it, even by
	// one hit anywhere, must not.
	grids := []struct {
		name string
		make func(n int, span int64) []Time
	}{
		{"uniform", func(n int, span int64) []Time {
			toa := make([]Time, n)
			for i := range toa {
				toa[i] = Time(r.Int64N(span)) - Time(span/2)
			}
			return toa
		}},
		{"grid", func(n int, span int64) []Time {
			toa := make([]Time, n)
			base := Time(r.Int64N(1 << 40))
			for i := range toa {
				toa[i] = base + 100*Time(r.Int64N(max(span/100, 1)))
			}
			return toa
		}},
		{"grid with one off", func(n int, span int64) []Time {
			toa := make([]Time, n)
			for i := range toa {
				toa[i] = 300 + 100*Time(r.Int64N(max(span/100, 1)))
			}
			if n > 0 {
				toa[r.IntN(n)] += Time(1 + r.Int64N(99))
			}
			return toa
		}},
		{"disordered readout", func(n int, span int64) []Time {
			toa := make([]Time, n)
			for i := range toa {
				toa[i] = Time(i)*1600 + 100*Time(r.Int64N(max(span/100, 1)))
			}
			return toa
		}},
		// A real readout: most hits in order (three to a time here, for
		// ties), a few late by up to span, so that mergeBehind sorts it.
		{"few behind", func(n int, span int64) []Time {
			toa := make([]Time, n)
			for i := range toa {
				toa[i] = 100 * Time(i/3)
				if r.IntN(10) == 0 {
					toa[i] -= Time(r.Int64N(max(span/100, 1)) * 100)
				}
			}
			return toa
		}},
		{"two values", func(n int, span int64) []Time {
			toa := make([]Time, n)
			for i := range toa {
				toa[i] = Time(r.Int64N(2)) * Time(span)
			}
			return toa
		}},
	}
	merged := 0 // batches sorted by mergeBehind
	for _, g := range grids {
		for _, n := range []int{0, 1, 2, 3, 5, 7, 100, 4099, 5000} {
			for _, span := range []int64{1, 3, 1 << 12, 1 << 40, 1 << 62} {
				toa := g.make(n, span)
				var tr timeRange
				if n > 0 {
					tr = startRange(toa[0])
					for _, t := range toa {
						tr.add(t, toa[0])
					}
				}
				if tr.fewBehind(n) {
					merged++
				}
				perm := s.sortByTime(toa, tr)
				want := make([]int32, n)
				for i := range want {
					want[i] = int32(i)
				}
				slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(toa[a], toa[b]) })
				if !slices.Equal(perm, want) {
					t.Fatalf("%s, n %d span %d: radix order differs from a stable sort", g.name, n, span)
				}
			}
		}
	}
	if merged < 10 {
		t.Fatalf("only %d batches went through mergeBehind", merged)
	}
}

func mustSorter(t *testing.T, window Time) *Sorter {
	t.Helper()
	s, err := NewSorter(window, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stableKeys is a KeySorter by comparison, obviously right; broken, it
// swaps two places of its order, as a faulty device might.
type stableKeys struct {
	broken bool
	calls  int
}

func (k *stableKeys) MinKeys() int { return 2 }

func (k *stableKeys) SortKeys(keys []uint64, from, _ uint, perm []int32) error {
	k.calls++
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(keys[a]>>from, keys[b]>>from) })
	if k.broken {
		perm[0], perm[len(perm)-1] = perm[len(perm)-1], perm[0]
	}
	return nil
}

// TestKeySorter: the batches a key sorter sorts come out as the host
// sorts them; an order that is not the times' is refused (Err) and the
// host sorts instead, so the hits are still the same.
func TestKeySorter(t *testing.T) {
	calls := 0
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 12))
		tc := generators["uniform"](r)
		window := Time(r.Int64N(int64(tc.dt)*8 + 2))
		in := disordered(r, tc, window)
		batches := r.Uint64()
		want := sortStream(rand.New(rand.NewPCG(batches, 0)), mustSorter(t, window), in, 200)
		for _, broken := range []bool{false, true} {
			s, k := mustSorter(t, window), &stableKeys{broken: broken}
			s.SetKeySorter(k)
			got := sortStream(rand.New(rand.NewPCG(batches, 0)), s, in, 200)
			if !slices.Equal(got.ToA, want.ToA) || !slices.Equal(got.ToT, want.ToT) || !slices.Equal(got.X, want.X) {
				t.Fatalf("seed %d, broken %v: another order than the host's", seed, broken)
			}
			if (s.Err() != nil) != (broken && k.calls > 0) || broken && k.calls > 1 || !broken && s.DeviceBatches() != k.calls {
				t.Fatalf("seed %d, broken %v: Err %v, %d of %d batches sorted on the key sorter", seed, broken, s.Err(), s.DeviceBatches(), k.calls)
			}
			calls += k.calls
		}
	}
	if calls < 40 {
		t.Fatalf("only %d batches went to the key sorter", calls)
	}
}
