package pixelbench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// batchHits is the batch size the hits are handed over in, as a readout
// stage would.
const batchHits = 1 << 16

// Set is a dataset held in memory.
type Set struct {
	Name    string
	Batches []*pixel.Hits
	Hits    int
	Span    pixel.Time // offset between two repetitions: beyond the last hit
}

// Load simulates n hits of dataset d at a rate in Mhit/s.
func Load(d pixelsim.Dataset, n int, rateMHz float64, seed uint64) (*Set, error) {
	s := &Set{Name: d.Name}
	cur := &pixel.Hits{}
	err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: n, Seed: seed, RateMHz: rateMHz}, func(h *pixel.Hits) error {
		for i := 0; i < h.Len(); {
			j := min(h.Len(), i+batchHits-cur.Len())
			cur.AppendRange(h, i, j)
			i = j
			if cur.Len() == batchHits {
				s.Batches = append(s.Batches, cur)
				cur = &pixel.Hits{}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cur.Len() > 0 {
		s.Batches = append(s.Batches, cur)
	}
	for _, b := range s.Batches {
		s.Hits += b.Len()
	}
	if s.Hits == 0 {
		return nil, fmt.Errorf("pixelbench: dataset %s: no hits", d.Name)
	}
	last := s.Batches[len(s.Batches)-1]
	s.Span = last.ToA[last.Len()-1] + pixel.Millisecond
	return s, nil
}

// Result is one measurement.
type Result struct {
	Mode     pixel.Mode
	Workers  int
	Hits     int64           // hits clustered per run
	Clusters int64           // clusters per run
	Runs     []time.Duration // sorted
}

// Median returns the median run time.
func (r Result) Median() time.Duration { return r.Runs[len(r.Runs)/2] }

// MhitPerS returns the rate of the median run.
func (r Result) MhitPerS() float64 { return float64(r.Hits) / r.Median().Seconds() / 1e6 }

// Measure clusters the set repeat times per run, with a fresh clusterer
// of the mode each run, and times runs runs. A labeler, when not nil,
// does the chunk step of mode chunked (see pixel.ChunkLabeler).
func Measure(ctx context.Context, s *Set, cfg pixel.Config, mode pixel.Mode, labeler pixel.ChunkLabeler, workers, repeat, runs int) (Result, error) {
	if repeat < 1 || runs < 1 {
		return Result{}, fmt.Errorf("pixelbench: repeat %d and runs %d must be positive", repeat, runs)
	}
	res := Result{Mode: mode, Workers: workers, Hits: int64(s.Hits) * int64(repeat)}
	for range runs {
		c, err := pixel.NewStream(cfg, mode, workers)
		if err != nil {
			return res, err
		}
		if labeler != nil {
			cc, ok := c.(*pixel.ChunkedClusterer)
			if !ok {
				return res, fmt.Errorf("pixelbench: a device clusters in mode chunked with the local definition, not %v", mode)
			}
			cc.SetLabeler(labeler)
		}
		var clusters int64
		start := time.Now()
		for k := range repeat {
			if err := ctx.Err(); err != nil {
				s.shift(-pixel.Time(k) * s.Span)
				return res, err
			}
			// Each batch moves on to its time in the next repetition once
			// it is clustered: the one pass over its times the method
			// needs, not a shift there and one back.
			for _, h := range s.Batches {
				clusters += int64(c.Add(h).Len())
				shift(h, s.Span)
			}
		}
		clusters += int64(c.Flush().Len())
		if err := c.Err(); err != nil {
			return res, err
		}
		res.Runs = append(res.Runs, time.Since(start))
		s.shift(-pixel.Time(repeat) * s.Span)
		if res.Clusters != 0 && clusters != res.Clusters {
			return res, fmt.Errorf("pixelbench: %v gave %d clusters, then %d", mode, res.Clusters, clusters)
		}
		res.Clusters = clusters
	}
	slices.Sort(res.Runs)
	return res, nil
}

// shift moves every batch of the set by the given time.
func (s *Set) shift(by pixel.Time) {
	for _, h := range s.Batches {
		shift(h, by)
	}
}

func shift(h *pixel.Hits, by pixel.Time) {
	if by == 0 {
		return
	}
	for i := range h.ToA {
		h.ToA[i] += by
	}
}
