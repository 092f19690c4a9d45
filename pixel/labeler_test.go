package pixel

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// hostLabeler is a ChunkLabeler on the host, for the tests of the
// clusterer's work with a labeler without a device: each chunk labelled as
// ChunkLabeler says, plainly (a map of each pixel's last hit, roots found
// by walking up), failing every failEvery-th call (0: never).
type hostLabeler struct {
	failEvery, calls int
	buffer, chunk    int
}

var errLabel = errors.New("labeler failed")

func (l *hostLabeler) Sizes() (int, int) { return l.buffer, l.chunk }

func (l *hostLabeler) Label(job *ChunkJob) error {
	l.calls++
	if l.failEvery > 0 && l.calls%l.failEvery == 0 {
		for i := range job.Parent {
			job.Parent[i] = -1 // garbage the clusterer must not use
		}
		return errLabel
	}
	h := job.Hits
	root := func(i int32) int32 {
		for job.Parent[i] != i {
			i = job.Parent[i]
		}
		return i
	}
	for k := range len(job.Bounds) - 1 {
		last := map[[2]int]int32{}
		for i := int32(job.Bounds[k]); i < int32(job.Bounds[k+1]); i++ {
			job.Parent[i] = i
			x, y, t := int(h.X[i]), int(h.Y[i]), h.ToA[i]
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					j, ok := last[[2]int{x + dx, y + dy}]
					if d := t - h.ToA[j]; !ok || d > job.Config.Dt || d < -job.Config.Dt {
						continue
					}
					a, b := root(i), root(j)
					job.Parent[max(a, b)] = min(a, b)
				}
			}
			if j, ok := last[[2]int{x, y}]; !ok || h.ToA[j] <= t {
				last[[2]int{x, y}] = i
			}
		}
		for i := int32(job.Bounds[k]); i < int32(job.Bounds[k+1]); i++ {
			job.Parent[i] = root(i)
		}
	}
	return nil
}

// TestLabelerMatchesSequential: with a labeler, labelling each buffer's new
// hits while the workers finish the buffer before, the chunked union-find
// gives the sequential clusterer's clusters, features and counts on every
// stream of the differential tests, in buffers and chunks of random sizes,
// and when the labeler fails now and then (reported by Err, nothing lost).
func TestLabelerMatchesSequential(t *testing.T) {
	againstSequential(t, 100, 13, func(t *testing.T, r *rand.Rand, seed int, cfg Config, h *Hits, seq *Clusterer, want *Clusters) {
		if cfg.Definition != Local {
			return
		}
		c, err := NewChunkedClusterer(cfg, 1+r.IntN(4), 0)
		if err != nil {
			t.Fatal(err)
		}
		lab := &hostLabeler{failEvery: []int{0, 0, 1, 2, 5}[r.IntN(5)], buffer: 1 + r.IntN(1+h.Len()/2), chunk: 1 + r.IntN(200)}
		c.SetLabeler(lab)
		keep := r.IntN(2) == 0
		c.KeepMembers(keep)
		got := feed(r, c, h)
		equal := equalFeatures
		if keep {
			equal = equalClusters
		}
		if err := equal(got, want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, buffers of %d, chunks of %d, members kept %v, failing every %d): %v",
				seed, h.Len(), cfg.Dt, lab.buffer, lab.chunk, keep, lab.failEvery, err)
		}
		if cs, ss := c.Stats(), seq.Stats(); cs != ss {
			t.Fatalf("seed %d: stats %+v, sequential %+v", seed, cs, ss)
		}
		if err := c.Err(); (err != nil) != (lab.failEvery > 0 && lab.calls >= lab.failEvery) || err != nil && !errors.Is(err, errLabel) {
			t.Fatalf("seed %d: %d calls failing every %d: error %v", seed, lab.calls, lab.failEvery, err)
		}
	})
}

// TestLabelerLatency: with a labeler, a buffer's clusters come out when
// the next buffer's hits are complete, and every one by Flush.
func TestLabelerLatency(t *testing.T) {
	cfg := Config{Definition: Local, Dt: 10, Width: 8, Height: 8}
	c, err := NewChunkedClusterer(cfg, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.SetLabeler(&hostLabeler{buffer: 100, chunk: 10})
	var h Hits
	for i := range 450 { // single hits far apart: a cluster each
		h.Append(uint16(i%8), uint16(i/8%8), Time(i)*100, 1)
	}
	var got []int
	for i := 0; i < h.Len(); i += 50 {
		got = append(got, c.Add(h.view(i, i+50)).Len())
	}
	got = append(got, c.Flush().Len())
	// The first buffer is labelled with the second's hits complete, and
	// finished with the third's; each holds back its last cluster, which
	// the next hits might reach.
	want := []int{0, 0, 0, 99, 0, 100, 0, 100, 0, 151}
	if !slices.Equal(got, want) {
		t.Fatalf("clusters out per call %v, want %v", got, want)
	}
}

// TestLabelerBecomesCalibrated: a stream whose energies start midway gives
// the same clusters with a labeler as on the workers alone.
func TestLabelerBecomesCalibrated(t *testing.T) {
	if err := becomesCalibrated(&hostLabeler{}); err != nil {
		t.Fatal(err)
	}
}

// becomesCalibrated compares the clusters of a stream whose energies
// start midway, with the labeler l and on the workers alone, in buffers of
// 100 new hits: the clusters a buffer finishes before the energies start
// have features from the ToT, and with a labeler a labelled buffer still
// waiting for the workers when they start is one of those. Each hit is a
// cluster of its own, the last of a buffer carried into the next.
func becomesCalibrated(l ChunkLabeler) error {
	cfg := Config{Definition: Local, Dt: 10, Width: 8, Height: 8}
	var before, after Hits
	for i := range 450 {
		h := &before
		if i >= 250 {
			h = &after
			h.E = append(h.E, float32(i))
		}
		h.Append(uint16(i%8), uint16(i/8%8), Time(i)*100, uint16(1+i%50))
	}
	var outs [2]Clusters
	for k, lab := range []ChunkLabeler{nil, l} {
		c, err := NewChunkedClusterer(cfg, 2, 0)
		if err != nil {
			return err
		}
		c.SetLabeler(lab)
		c.size, c.chunk = 100, 10
		all := &outs[k]
		all.Reset()
		c.AddTo(all, &before)
		c.AddTo(all, &after)
		c.FlushTo(all)
		if err := c.Err(); err != nil {
			return err
		}
	}
	if err := equalFeatures(&outs[1], &outs[0]); err != nil {
		return err
	}
	if peak := outs[0].Max[198]; peak != float64(1+198%50) {
		return fmt.Errorf("the last cluster of the second buffer has peak %v, not its ToT", peak)
	}
	return nil
}
