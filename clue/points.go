package clue

import (
	"fmt"
	"math"
	"slices"
)

// Points are weighted points as structure of arrays: Coords[d][i] is
// coordinate d of point i. Layer is empty (all on layer 0) or one integer
// per point, and so is Event: points of different events never interact
// either, and each event numbers its clusters from 0 (many independent
// events clustered in one run, as a calorimeter's readout delivers
// them).
type Points struct {
	Coords [][]float64
	Layer  []int32
	Event  []int32
	Weight []float64
}

// Len is the number of points.
func (p *Points) Len() int { return len(p.Weight) }

// Dim is the number of coordinates.
func (p *Points) Dim() int { return len(p.Coords) }

// Validate checks shapes and values; the error names the point. Run
// checks the values in its first parallel pass (Clusterer.extents) and
// calls firstBadValue only when that finds one.
func (p *Points) Validate() error {
	if err := p.CheckShape(); err != nil {
		return err
	}
	return p.firstBadValue()
}

// CheckShape checks the lengths of the columns (Validate checks the
// values too).
func (p *Points) CheckShape() error {
	n := p.Len()
	if p.Dim() == 0 {
		return fmt.Errorf("clue: points have no coordinates")
	}
	for d, c := range p.Coords {
		if len(c) != n {
			return fmt.Errorf("clue: coordinate %d has %d values for %d points", d, len(c), n)
		}
	}
	if len(p.Layer) != 0 && len(p.Layer) != n {
		return fmt.Errorf("clue: %d layers for %d points", len(p.Layer), n)
	}
	if len(p.Event) != 0 && len(p.Event) != n {
		return fmt.Errorf("clue: %d events for %d points", len(p.Event), n)
	}
	return nil
}

// firstBadValue returns the error of the first point with a weight or a
// coordinate that is not allowed, or nil.
func (p *Points) firstBadValue() error {
	for i, w := range p.Weight {
		if !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("clue: point %d: weight %v must be finite and not negative", i, w)
		}
		for d := range p.Coords {
			if v := p.Coords[d][i]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("clue: point %d: coordinate %d is %v", i, d, v)
			}
		}
	}
	return nil
}

// Result holds CLUE's output per point, in input order.
type Result struct {
	Rho       []float64
	Delta     []float64 // +Inf without a nearest-higher
	NH        []int32   // nearest-higher index, -1 for none
	IsSeed    []bool
	ClusterID []int32 // -1 for outliers and their followers
	Clusters  int     // number of seeds
	Outliers  int     // points with cluster id -1
}

// Reserve makes room for n more points in every column.
func (r *Result) Reserve(n int) {
	r.Rho, r.Delta, r.NH = slices.Grow(r.Rho, n), slices.Grow(r.Delta, n), slices.Grow(r.NH, n)
	r.IsSeed, r.ClusterID = slices.Grow(r.IsSeed, n), slices.Grow(r.ClusterID, n)
}

// Count sets Clusters and Outliers from IsSeed and ClusterID: for a
// result read back from a file.
func (r *Result) Count() {
	r.Clusters, r.Outliers = 0, 0
	for i, s := range r.IsSeed {
		r.Clusters += b2i(s)
		r.Outliers += b2i(r.ClusterID[i] < 0)
	}
}
