package clue

// The scans of the tiles of a 2D search, the inner loops of the density
// and of the nearest-higher search. flatDensity2D, nearestHigher2D and
// nearestHigher2DRange are the functions here in the default build,
// vector code in the vector build (scan_simd.go point by point with AVX2,
// scan_block_simd.go by blocks of points with AVX-512), with the same
// results to the bit; the near-list search (nearestHigherListed, clue.go)
// is scalar.

// rowPad is how many values the columns that the scans read hold past
// their end, so that a vector of eight starting at any point is in bounds.
const rowPad = 7

// flatDensity2DGo sets the density of points [lo, hi) in the commonest
// case (2D, flat kernel, integer weights, so exact in any order): the
// weights within the limit summed as the points are scanned, with no
// candidate list. On the way it lists the points within the first
// nearest-higher radius (firstLimit), for nearestHigher: a handful
// instead of the tens that the tiles around a point hold.
func (c *Clusterer) flatDensity2DGo(lo, hi int, r, limit, firstLimit float64, s *scratch) {
	g := &c.grid
	xs, ys, w := c.coords[0], c.coords[1], c.weight
	for i := lo; i < hi; i++ {
		x, y := xs[i], ys[i]
		b := g.box2D(x, y, r, int(c.layerTile[i]))
		near := c.nearSlots(i, s)
		var sum float64
		n := uint(0)
		for row := b.first; row <= b.last; row += g.n[0] {
			from, to := g.start[row+b.x0], g.start[row+b.x1+1]
			var rowSum float64
			rowSum, n = flatRowGo(xs[from:to], ys[from:to], w[from:to], from, x, y, limit, firstLimit, near, n)
			sum += rowSum
		}
		c.rho[i] = sum
		if c.hasNear {
			c.nearN[i] = uint8(min(n, nearCap+1))
		}
		c.setRank(i)
	}
}

// nearestHigher2DGo is one branch-free pass over the tiles of a 2D
// search for the nearest higher point within radius r (see [nearest]).
func (c *Clusterer) nearestHigher2DGo(i int, r, limit float64) (int32, float64, bool) {
	g := &c.grid
	xs, ys, rho, order := c.coords[0], c.coords[1], c.rho, c.order
	x, y := xs[i], ys[i]
	b := g.box2D(x, y, r, int(c.layerTile[i]))
	rhoI, idxI := rho[i], order[i]
	nh := newNearest()
	for row := b.first; row <= b.last; row += g.n[0] {
		lo, hi := g.start[row+b.x0], g.start[row+b.x1+1]
		xr := xs[lo:hi]
		yr, rr, or := ys[lo:hi][:len(xr)], rho[lo:hi][:len(xr)], order[lo:hi][:len(xr)]
		for k, xj := range xr {
			dx, dy := xj-x, yr[k]-y
			d2 := float64(dx*dx) + float64(dy*dy)
			nh = nh.see(d2, b2i(d2 <= limit)&higher(rr[k], or[k], rhoI, idxI), lo+int32(k))
		}
	}
	return nh.result()
}

// flatRowGo returns the sum of the weights of the points of a run (the
// first is grid point lo) within limit of (x, y), and lists those within
// firstLimit in near (a list of nearStride slots) from n on, returning
// the new count. A function of its own per run of a row, so that its loop
// keeps the run's columns in registers. The list is a slice, not an
// array pointer: the pointer's nil check would read the list before the
// first write, and on a run's first pass over fresh memory that read maps
// the shared zero page, which the write must then replace, flushing the
// TLBs of the other workers (3x slower densities on two workers, cold).
func flatRowGo(xr, yr, wr []float64, lo int32, x, y, limit, firstLimit float64, near []int32, n uint) (float64, uint) {
	near = near[:nearStride]
	yr, wr = yr[:len(xr)], wr[:len(xr)]
	var sum float64
	for k, xj := range xr {
		dx, dy := xj-x, yr[k]-y
		d2 := float64(dx*dx) + float64(dy*dy)
		sum += masked(wr[k], d2 <= limit)
		// Written always, kept when near: no branch. Past the capacity
		// the writes wrap around over the list, and the count goes on,
		// which marks the list as unusable.
		near[n%nearStride] = lo + int32(k)
		n += uint(b2i(d2 <= firstLimit))
	}
	return sum, n
}
