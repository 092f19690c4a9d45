package pixel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestResumeMatchesOneRun: a stream clustered in stretches, each by a new
// clusterer (and a new sorter in front) resuming from the checkpoint of
// the one before, gives the clusters of the stream clustered in one go:
// the same hits in each, the same features, every id once, the counts.
func TestResumeMatchesOneRun(t *testing.T) {
	againstSequential(t, 100, 11, func(t *testing.T, r *rand.Rand, seed int, cfg Config, h *Hits, seq *Clusterer, want *Clusters) {
		// A little disorder for the sorter to undo: late hits are beyond
		// a checkpoint's promise (see Checkpoint).
		window := cfg.Dt + 1
		disordered := &Hits{}
		for i := range h.Len() {
			disordered.AppendFrom(h, i)
		}
		for i := 1; i < disordered.Len(); i++ {
			if j := i - 1; r.IntN(4) == 0 && disordered.ToA[i]-disordered.ToA[j] < window {
				swapHits(disordered, i, j)
			}
		}
		var got Clusters
		got.Reset()
		var cp Checkpoint
		var pending Hits
		var released, maxSeen Time
		resumed := false
		for i := 0; i < disordered.Len(); {
			c, _ := NewClusterer(cfg)
			c.KeepMembers(true)
			s, _ := NewSorter(window, 0)
			if resumed {
				s.Resume(&pending, released, maxSeen)
				if err := c.Resume(&cp, &got); err != nil {
					t.Fatal(err)
				}
			}
			// A few batches, then a checkpoint (or the end).
			for range 1 + r.IntN(4) {
				j := min(disordered.Len(), i+1+r.IntN(1+disordered.Len()/8))
				c.AddTo(&got, s.Push(disordered.view(i, j)))
				i = j
			}
			if i == disordered.Len() {
				c.AddTo(&got, s.Flush())
				c.FlushTo(&got)
				checkSameClusters(t, seed, &got, want)
				if st, wst := c.Stats(), seq.Stats(); st.Hits != wst.Hits || st.Clusters != wst.Clusters || st.OutOfRange != wst.OutOfRange || st.Late != 0 {
					t.Fatalf("seed %d: stats %+v, want %+v without late hits", seed, st, wst)
				}
				return
			}
			pending.Reset()
			released, maxSeen = s.Checkpoint(&pending)
			if err := c.Checkpoint(&cp); err != nil {
				t.Fatal(err)
			}
			resumed = true
		}
	})
}

func swapHits(h *Hits, i, j int) {
	h.X[i], h.X[j] = h.X[j], h.X[i]
	h.Y[i], h.Y[j] = h.Y[j], h.Y[i]
	h.ToA[i], h.ToA[j] = h.ToA[j], h.ToA[i]
	h.ToT[i], h.ToT[j] = h.ToT[j], h.ToT[i]
	if h.Calibrated() {
		h.E[i], h.E[j] = h.E[j], h.E[i]
	}
}

// checkSameClusters compares two outputs as sets of clusters, each known
// by its hits (their ToT carries the input index): the features must be
// equal, the ids of got each once from 0.
func checkSameClusters(t *testing.T, seed int, got, want *Clusters) {
	t.Helper()
	byHits := func(c *Clusters) map[string]int {
		m := make(map[string]int, c.Len())
		for i := range c.Len() {
			hits := slices.Clone(c.Members.ToT[c.Start[i]:c.Start[i+1]])
			slices.Sort(hits)
			m[fmt.Sprint(hits)] = i
		}
		return m
	}
	g, w := byHits(got), byHits(want)
	if len(g) != len(w) || got.Len() != want.Len() {
		t.Fatalf("seed %d: %d clusters, want %d", seed, got.Len(), want.Len())
	}
	ids := make([]bool, got.Len())
	for k, i := range g {
		j, ok := w[k]
		if !ok {
			t.Fatalf("seed %d: a cluster of hits %s not in the one run", seed, k)
		}
		if got.Size[i] != want.Size[j] || got.FirstToA[i] != want.FirstToA[j] || got.LastToA[i] != want.LastToA[j] ||
			got.ToTSum[i] != want.ToTSum[j] || got.ESum[i] != want.ESum[j] || got.X[i] != want.X[j] || got.Y[i] != want.Y[j] ||
			got.Max[i] != want.Max[j] {
			t.Fatalf("seed %d: the cluster of hits %s has other features", seed, k)
		}
		if id := got.ID[i]; id < 0 || id >= int64(len(ids)) || ids[id] {
			t.Fatalf("seed %d: id %d twice or out of range", seed, id)
		} else {
			ids[id] = true
		}
	}
}

// TestCheckpointNeedsMembers: without the members, the hits of a long
// cluster may be gone, and a checkpoint is refused.
func TestCheckpointNeedsMembers(t *testing.T) {
	c, _ := NewClusterer(Config{Dt: 100, Width: 4, Height: 4})
	var cp Checkpoint
	if err := c.Checkpoint(&cp); err != errFolded {
		t.Fatalf("checkpoint without members: %v", err)
	}
	c.KeepMembers(true)
	c.Add(&Hits{X: []uint16{1}, Y: []uint16{1}, ToA: []Time{5}, ToT: []uint16{3}})
	if err := c.Checkpoint(&cp); err != nil || cp.Open.Len() != 1 || cp.Now != 5 || cp.Stats.Hits != 1 {
		t.Fatalf("checkpoint: %v, %d open hits, now %v, %+v", err, cp.Open.Len(), cp.Now, cp.Stats)
	}
	if err := c.Resume(&cp, &Clusters{}); err == nil {
		t.Fatal("a used clusterer resumed")
	}
}

// TestKeepOpenHits: a cluster that stays open (a pixel firing faster than
// dt) keeps all its hits for a checkpoint, where the buffer would fold
// them otherwise; no cluster carries members.
func TestKeepOpenHits(t *testing.T) {
	for _, keep := range []bool{false, true} {
		c, _ := NewClusterer(Config{Dt: 100, Width: 4, Height: 4})
		c.KeepOpenHits(keep)
		c.foldAt = 64
		var h Hits
		for i := range 5000 {
			h.Append(1, 1, Time(50*i), 1)
		}
		out := c.Add(&h)
		var cp Checkpoint
		err := c.Checkpoint(&cp)
		switch {
		case keep && (err != nil || cp.Open.Len() != 5000 || out.Len() != 0):
			t.Fatalf("kept: %v, %d open hits, %d clusters out", err, cp.Open.Len(), out.Len())
		case !keep && (err == nil || len(c.folds) == 0):
			t.Fatalf("not kept: %v, %d folded clusters", err, len(c.folds))
		}
		if fl := c.Flush(); fl.Len() != 1 || fl.Size[0] != 5000 || fl.HasMembers() {
			t.Fatalf("keep %v: %d clusters at the end, members %v", keep, fl.Len(), fl.HasMembers())
		}
	}
}
