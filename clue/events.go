package clue

import (
	"math"
	"slices"

	"github.com/hitflow/hitflow/internal/parts"
)

// Events are clustered as layers of their own: each (event, layer) pair
// of the points is one layer of a view of them, which every step takes as
// it takes layers, and the seeds of each event are numbered from 0
// afterwards.

// Events is the scratch of a run with events, kept from run to run.
type Events struct {
	// Workers is how many goroutines the passes over every point take
	// (0: GOMAXPROCS).
	Workers int

	layers []int32           // the view's layer of each point
	keys   []int64           // the distinct (event, layer) pairs, when remapped
	first  []int32           // seed numbering: the per-event id of each global id
	counts []map[int32]int32 // seeds of each event in each part of the points
	seen   map[int32]int32   // seeds of each event in the parts so far
	view   Points
}

// View checks the shape of the points and returns them when they have
// no events, else the points with one layer per (event, layer) pair
// (valid until the next call).
func (e *Events) View(pts *Points) (*Points, error) { return e.ViewInto(pts, nil) }

// ViewInto is View with the view's layers written into layers, as long
// as the points (nil: the Events' own), for a device's staging memory.
func (e *Events) ViewInto(pts *Points, layers []int32) (*Points, error) {
	if err := pts.CheckShape(); err != nil {
		return nil, err
	}
	if len(pts.Event) == 0 {
		return pts, nil
	}
	n := pts.Len()
	if layers == nil {
		e.layers = slices.Grow(e.layers[:0], n)[:n]
		layers = e.layers
	}
	layers = layers[:n]
	ev, ly := pts.Event, pts.Layer
	emin, emax := e.minMax(ev)
	lmin, lmax := int32(0), int32(0)
	if len(ly) > 0 {
		lmin, lmax = e.minMax(ly)
	}
	span := int64(lmax) - int64(lmin) + 1
	if (int64(emax)-int64(emin)+1)*span <= math.MaxInt32 {
		parts.Run(n, e.Workers, minPart, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				l := int64(0)
				if len(ly) > 0 {
					l = int64(ly[i]) - int64(lmin)
				}
				layers[i] = int32((int64(ev[i])-int64(emin))*span + l)
			}
		})
	} else { // ids too far apart to combine: the pairs numbered in order
		e.keys = slices.Grow(e.keys[:0], n)[:n]
		for i := range n {
			e.keys[i] = int64(ev[i])<<32 | int64(uint32(layerOf(ly, i)))
		}
		sorted := slices.Clone(e.keys)
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
		for i, k := range e.keys {
			j, _ := slices.BinarySearch(sorted, k)
			layers[i] = int32(j)
		}
	}
	e.view = Points{Coords: pts.Coords, Layer: layers, Weight: pts.Weight}
	return &e.view, nil
}

func layerOf(ly []int32, i int) int32 {
	if len(ly) == 0 {
		return 0
	}
	return ly[i]
}

// minMax returns the least and the greatest of s, not empty.
func (e *Events) minMax(s []int32) (lo, hi int32) {
	k := parts.Count(len(s), e.Workers, minPart)
	var los, his [maxParts]int32
	k = min(k, maxParts)
	parts.Run(len(s), k, minPart, func(p, a, b int) {
		l, h := s[a], s[a]
		for _, v := range s[a:b] {
			l, h = min(l, v), max(h, v)
		}
		los[p], his[p] = l, h
	})
	return slices.Min(los[:k]), slices.Max(his[:k])
}

// minPart is the fewest points a part of a pass over every point takes
// (see parts.Run), maxParts the most parts of minMax.
const (
	minPart  = 1 << 16
	maxParts = 64
)

// Number gives the clusters of r, numbered across all the points in
// input order, the numbers of their events: each event's seeds from 0 in
// input order. Nothing to do without events.
func (e *Events) Number(pts *Points, r *Result) {
	first := e.Numbers(pts, r)
	if first == nil {
		return
	}
	parts.Run(len(r.ClusterID), e.Workers, minPart, func(_, lo, hi int) {
		for i, id := range r.ClusterID[lo:hi] {
			if id >= 0 {
				r.ClusterID[lo+i] = first[id]
			}
		}
	})
}

// Numbers returns, for each cluster id of r, the number Number gives it
// (valid until the next call; nil without events or clusters, when
// Number changes nothing), for a caller that renumbers the ids as it
// copies them.
func (e *Events) Numbers(pts *Points, r *Result) []int32 {
	if len(pts.Event) == 0 {
		return nil
	}
	e.first = slices.Grow(e.first[:0], r.Clusters)[:r.Clusters]
	// Each part counts its seeds per event; the counts of the parts
	// before it are where its seeds' numbers start.
	n := len(r.IsSeed)
	k := min(parts.Count(n, e.Workers, minPart), maxParts)
	for len(e.counts) < k {
		e.counts = append(e.counts, map[int32]int32{})
	}
	parts.Run(n, k, minPart, func(p, lo, hi int) {
		count := e.counts[p]
		clear(count)
		for i, s := range r.IsSeed[lo:hi] {
			if s {
				count[pts.Event[lo+i]]++
			}
		}
	})
	if e.seen == nil {
		e.seen = map[int32]int32{}
	}
	clear(e.seen)
	for _, count := range e.counts[:k] { // each part's counts become its starts
		for ev, c := range count {
			count[ev] = e.seen[ev]
			e.seen[ev] += c
		}
	}
	parts.Run(n, k, minPart, func(p, lo, hi int) {
		next := e.counts[p]
		for i, s := range r.IsSeed[lo:hi] {
			if s {
				ev := pts.Event[lo+i]
				e.first[r.ClusterID[lo+i]] = next[ev]
				next[ev]++
			}
		}
	})
	return e.first
}
