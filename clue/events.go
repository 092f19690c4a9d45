package clue

import (
	"math"
	"slices"
)

// Events are clustered as layers of their own: each (event, layer) pair
// of the points is one layer of a view of them, which every step takes as
// it takes layers, and the seeds of each event are numbered from 0
// afterwards.

// Events is the scratch of a run with events, kept from run to run.
type Events struct {
	layers []int32 // the view's layer of each point
	keys   []int64 // the distinct (event, layer) pairs, when remapped
	first  []int32 // seed numbering: the per-event id of each global id
	count  map[int32]int32
	view   Points
}

// View checks the shape of the points and returns them when they have
// no events, else the points with one layer per (event, layer) pair
// (valid until the next call).
func (e *Events) View(pts *Points) (*Points, error) {
	if err := pts.CheckShape(); err != nil {
		return nil, err
	}
	if len(pts.Event) == 0 {
		return pts, nil
	}
	n := pts.Len()
	e.layers = slices.Grow(e.layers[:0], n)[:n]
	ev, ly := pts.Event, pts.Layer
	emin, emax := minMax(ev)
	lmin, lmax := int32(0), int32(0)
	if len(ly) > 0 {
		lmin, lmax = minMax(ly)
	}
	span := int64(lmax) - int64(lmin) + 1
	if (int64(emax)-int64(emin)+1)*span <= math.MaxInt32 {
		for i := range n {
			l := int64(0)
			if len(ly) > 0 {
				l = int64(ly[i]) - int64(lmin)
			}
			e.layers[i] = int32((int64(ev[i])-int64(emin))*span + l)
		}
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
			e.layers[i] = int32(j)
		}
	}
	e.view = Points{Coords: pts.Coords, Layer: e.layers, Weight: pts.Weight}
	return &e.view, nil
}

func layerOf(ly []int32, i int) int32 {
	if len(ly) == 0 {
		return 0
	}
	return ly[i]
}

func minMax(s []int32) (lo, hi int32) {
	lo, hi = s[0], s[0]
	for _, v := range s {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// Number gives the clusters of r, numbered across all the points in
// input order, the numbers of their events: each event's seeds from 0 in
// input order. Nothing to do without events.
func (e *Events) Number(pts *Points, r *Result) {
	if len(pts.Event) == 0 {
		return
	}
	e.first = slices.Grow(e.first[:0], r.Clusters)[:r.Clusters]
	if e.count == nil {
		e.count = map[int32]int32{}
	}
	clear(e.count)
	for i, s := range r.IsSeed {
		if s {
			ev := pts.Event[i]
			e.first[r.ClusterID[i]] = e.count[ev]
			e.count[ev]++
		}
	}
	for i, id := range r.ClusterID {
		if id >= 0 {
			r.ClusterID[i] = e.first[id]
		}
	}
}
