//go:build goexperiment.simd && amd64

package clue

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestVectorScans: the vector box scans against the scalar ones, point by
// point, on grids of random 2D inputs (lattices full of equal distances
// and duplicates, blobs, runs of every length mod 4), for radii around
// the points' spacing and the limits exactly at lattice distances, with
// densities that tie. The near lists must agree entry by entry up to
// their count, and past the capacity in the count alone.
func TestVectorScans(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	defer func(b bool) { haveAVX512 = b }(haveAVX512)
	haveAVX512 = false // the point-by-point scans, with near lists
	c := &Clusterer{Workers: 1}
	for seed := range 400 {
		r := rand.New(rand.NewPCG(uint64(seed), 41))
		n := 1 + r.IntN(400)
		pts := &Points{Coords: [][]float64{make([]float64, n), make([]float64, n)}, Weight: make([]float64, n)}
		for i := range n {
			for d := range 2 {
				if seed%2 == 0 {
					pts.Coords[d][i] = float64(r.IntN(12)) * 0.5
				} else {
					pts.Coords[d][i] = float64(r.IntN(3))*6 + r.NormFloat64()
				}
			}
			pts.Weight[i] = float64(1 + r.IntN(2))
		}
		dc := []float64{0.5, 1, 1.5, 2}[r.IntN(4)]
		p := Params{DC: dc, RhoC: 2, DeltaC: dc, DeltaO: dc, TileSize: []float64{0, 1, 2.5}[r.IntN(3)]}
		// The run leaves the near lists; its results took the grid's
		// columns, which the index then makes again.
		if _, err := c.Run(pts, p); err != nil {
			t.Fatal(err)
		}
		if err := c.index(pts, p); err != nil {
			t.Fatal(err)
		}
		// Densities with many ties: the scans read c.rho and c.order.
		for k := range c.rho[:n] {
			c.rho[k] = float64(r.IntN(4))
		}
		for i := range n {
			for _, radius := range []float64{p.DC, p.DC / 2, 2 * p.DC} {
				limit, first := threshold(radius), threshold(radius/2)
				list := c.near[i*nearStride:][:nearStride]
				c.flatDensity2D(i, i+1, radius, limit, first, c.scratch(0))
				sv, nv, nearV := c.rho[i], c.nearN[i], slices.Clone(list)
				c.flatDensity2DGo(i, i+1, radius, limit, first, c.scratch(0))
				sg, ng := c.rho[i], c.nearN[i]
				if sv != sg || nv != ng || ng <= nearCap && !slices.Equal(nearV[:ng], list[:ng]) {
					t.Fatalf("seed %d point %d radius %v: density %v, %d near %v; scalar %v, %d near %v",
						seed, i, radius, sv, nv, nearV, sg, ng, list)
				}
				jv, dv, okv := c.nearestHigher2D(i, radius, limit)
				jg, dg, okg := c.nearestHigher2DGo(i, radius, limit)
				if jv != jg || dv != dg || okv != okg {
					t.Fatalf("seed %d point %d radius %v: nearest %d at %v (%v), scalar %d at %v (%v)", seed, i, radius, jv, dv, okv, jg, dg, okg)
				}
			}
		}
	}
}

// TestMatchesReferenceAVX2: the whole of CLUE against the reference with
// the point-by-point vector scans, on a machine whose default is by
// blocks (TestMatchesReference then covers the blocks).
func TestMatchesReferenceAVX2(t *testing.T) {
	if !haveAVX2 || !haveAVX512 {
		t.Skip("the AVX2 scans are the default here")
	}
	defer func(b bool) { haveAVX512 = b }(haveAVX512)
	haveAVX512 = false
	matchReference(t, 1000)
}

// TestBlockScans: the scans by blocks against the scalar code on
// calorimeter-like layers (blobs of unit weights in noise, so blocks of
// every size up to eight, on rows of many tiles), on one and two workers,
// for the paper's parameters and for dc equal to dm (no second search).
func TestBlockScans(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512")
	}
	defer func(b bool) { haveAVX512 = b }(haveAVX512)
	for seed := range 20 {
		r := rand.New(rand.NewPCG(uint64(seed), 8))
		n := 2000 + r.IntN(20000)
		pts := &Points{Coords: [][]float64{make([]float64, n), make([]float64, n)}, Weight: make([]float64, n), Layer: make([]int32, n)}
		for i := range n {
			if r.IntN(20) == 0 {
				pts.Coords[0][i], pts.Coords[1][i] = r.Float64()*200, r.Float64()*200
			} else {
				pts.Coords[0][i] = float64(r.IntN(8))*25 + r.NormFloat64()*3
				pts.Coords[1][i] = float64(r.IntN(8))*25 + r.NormFloat64()*3
			}
			if seed%4 == 0 { // lattice points: ties in distance and density
				pts.Coords[0][i], pts.Coords[1][i] = math.Round(pts.Coords[0][i]), math.Round(pts.Coords[1][i])
			}
			pts.Weight[i] = float64(1 + r.IntN(2)*r.IntN(2))
			pts.Layer[i] = int32(r.IntN(4))
		}
		dm := []float64{5, 3}[seed%2]
		p := Params{DC: 3, RhoC: 8, DeltaC: dm, DeltaO: dm, TileSize: []float64{0, 5, 2}[seed%3]}
		haveAVX512 = false
		want, err := Run(pts, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		want = cloneResult(want)
		haveAVX512 = true
		for _, w := range []int{1, 2} {
			got, err := Run(pts, p, w)
			if err != nil {
				t.Fatal(err)
			}
			if err := equalResults(got, want); err != nil {
				t.Fatalf("seed %d, %d points, %+v, %d workers: %v", seed, n, p, w, err)
			}
		}
	}
}

func cloneResult(r *Result) *Result {
	c := *r
	c.Rho, c.Delta, c.NH = slices.Clone(r.Rho), slices.Clone(r.Delta), slices.Clone(r.NH)
	c.IsSeed, c.ClusterID = slices.Clone(r.IsSeed), slices.Clone(r.ClusterID)
	return &c
}
