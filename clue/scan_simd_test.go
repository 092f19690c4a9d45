//go:build goexperiment.simd && amd64

package clue

import (
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
		if _, err := c.Run(pts, p); err != nil {
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
				c.flatDensity2D(i, i+1, radius, limit, first)
				sv, nv, nearV := c.rho[i], c.nearN[i], slices.Clone(list)
				c.flatDensity2DGo(i, i+1, radius, limit, first)
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
