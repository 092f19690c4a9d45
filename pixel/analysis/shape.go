package analysis

import (
	"math"
	"slices"

	"github.com/hitflow/hitflow/pixel"
)

// Shape is the morphology of a cluster, from the pixels it hit (each
// counted once, whatever its hits' energies: the shape of the track).
type Shape struct {
	Pixels int32 // distinct pixels
	Inner  int32 // pixels whose 8 neighbours are all in the cluster
	// From the eigenvalues l1 >= l2 of the covariance of the pixels'
	// positions: Roundness l2/l1 (1 for a disc or a square, 0 for a
	// line), Linearity (l1-l2)/(l1+l2) (1 for a line, 0 for a disc). A
	// single pixel is round: 1 and 0.
	Roundness, Linearity float64
	// The extent of the pixels, in pixels, along the principal axis (the
	// eigenvector of l1) and across it: the distance between the
	// outermost pixel centres plus one pixel.
	Length, Width float64
}

// Shaper computes shapes, reusing its buffers from cluster to cluster.
type Shaper struct {
	keys []uint32 // the cluster's pixels, x<<16 | y, sorted
}

// Shapes appends the shape of every cluster of c to dst; c must carry its
// members (see pixel.Clusterer.KeepMembers).
func (s *Shaper) Shapes(c *pixel.Clusters, dst []Shape) ([]Shape, error) {
	if !c.HasMembers() {
		return dst, pixel.ErrNoMembers
	}
	m := &c.Members
	for i := range c.Len() {
		dst = append(dst, s.shape(m.X[c.Start[i]:c.Start[i+1]], m.Y[c.Start[i]:c.Start[i+1]]))
	}
	return dst, nil
}

// shape is the shape of the pixels (xs[i], ys[i]), repeats allowed.
func (s *Shaper) shape(xs, ys []uint16) Shape {
	s.keys = s.keys[:0]
	for i := range xs {
		s.keys = append(s.keys, uint32(xs[i])<<16|uint32(ys[i]))
	}
	slices.Sort(s.keys)
	s.keys = slices.Compact(s.keys)
	n := len(s.keys)
	sh := Shape{Pixels: int32(n)}
	// Moments about the first pixel, so that the sums stay small and
	// exact.
	x0, y0 := float64(s.keys[0]>>16), float64(s.keys[0]&0xffff)
	var sx, sy, sxx, syy, sxy float64
	for _, k := range s.keys {
		x, y := float64(k>>16)-x0, float64(k&0xffff)-y0
		sx, sy = sx+x, sy+y
		sxx, syy, sxy = sxx+x*x, syy+y*y, sxy+x*y
		if s.inner(k) {
			sh.Inner++
		}
	}
	fn := float64(n)
	cxx, cyy, cxy := sxx/fn-sx*sx/fn/fn, syy/fn-sy*sy/fn/fn, sxy/fn-sx*sy/fn/fn
	// Eigenvalues of [[cxx cxy] [cxy cyy]].
	mean, diff := (cxx+cyy)/2, math.Hypot((cxx-cyy)/2, cxy)
	l1, l2 := mean+diff, max(mean-diff, 0)
	sh.Roundness, sh.Linearity = 1, 0
	if l1 > 0 {
		sh.Roundness, sh.Linearity = l2/l1, (l1-l2)/(l1+l2)
	}
	// The principal axis: (1, 0) when the covariance does not choose one.
	ux, uy := 1.0, 0.0
	if diff > 0 {
		// The eigenvector of l1, from whichever row is better conditioned.
		if cxx >= cyy {
			ux, uy = l1-cyy, cxy
		} else {
			ux, uy = cxy, l1-cxx
		}
		norm := math.Hypot(ux, uy)
		ux, uy = ux/norm, uy/norm
	}
	lmin, lmax, wmin, wmax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, k := range s.keys {
		x, y := float64(k>>16)-x0, float64(k&0xffff)-y0
		along, across := x*ux+y*uy, -x*uy+y*ux
		lmin, lmax = min(lmin, along), max(lmax, along)
		wmin, wmax = min(wmin, across), max(wmax, across)
	}
	sh.Length, sh.Width = lmax-lmin+1, wmax-wmin+1
	return sh
}

// inner reports whether the 8 neighbours of pixel k are in the sorted
// keys.
func (s *Shaper) inner(k uint32) bool {
	x, y := k>>16, k&0xffff
	if x == 0 || y == 0 || x == 0xffff || y == 0xffff {
		return false
	}
	for dx := uint32(0); dx < 3; dx++ {
		for dy := uint32(0); dy < 3; dy++ {
			if dx == 1 && dy == 1 {
				continue
			}
			if _, ok := slices.BinarySearch(s.keys, (x+dx-1)<<16|(y+dy-1)); !ok {
				return false
			}
		}
	}
	return true
}
