//go:build goexperiment.simd && amd64

package clue

import (
	"math"
	"simd/archsimd"
)

var haveAVX2 = archsimd.X86.AVX2()

// The vector scans take four points at a time. A run's last vector reads
// up to three values past its end (the columns are padded: rowPad), which
// a mask of the valid lanes drops. Distances are computed with the same
// operations as the scalar code, without fused multiply-adds, so every
// distance, comparison and sum is the same bits. Each function clears the
// upper halves of the vector registers before it returns: scalar float
// code uses SSE encodings, which run several times slower after vector
// code that left them dirty (eight times, measured here).

// lanes is 0, 1, 2, 3: with the count of values left in a run, the valid
// lanes of a vector.
var lanes = [4]int64{0, 1, 2, 3}

// flatDensity2D is flatDensity2DGo by blocks with AVX-512 (without near
// lists), else four candidates at a time with AVX2.
func (c *Clusterer) flatDensity2D(lo, hi int, r, limit, firstLimit float64, s *scratch) {
	if blockScans() {
		c.flatDensityBlocks(lo, hi, r, limit)
		return
	}
	if !haveAVX2 {
		c.flatDensity2DGo(lo, hi, r, limit, firstLimit, s)
		return
	}
	for i := lo; i < hi; i++ {
		c.rho[i] = c.flatDensityAt(i, r, limit, firstLimit, s)
		c.setRank(i)
	}
}

// flatDensityAt is the density of point i: a function of its own, so
// that the registers' upper halves are cleared before the next point's
// scalar code (see above).
func (c *Clusterer) flatDensityAt(i int, r, limit, firstLimit float64, sc *scratch) float64 {
	g := &c.grid
	xs, ys, w := c.coords[0], c.coords[1], c.weight
	x, y := xs[i], ys[i]
	b := g.box2D(x, y, r, int(c.layerTile[i]))
	near := (*[nearStride]int32)(c.nearSlots(i, sc))
	xa, ya, wa := xs[:cap(xs)], ys[:cap(ys)], w[:cap(w)]
	xv, yv := archsimd.BroadcastFloat64x4(x), archsimd.BroadcastFloat64x4(y)
	limitV, firstV := archsimd.BroadcastFloat64x4(limit), archsimd.BroadcastFloat64x4(firstLimit)
	iota := archsimd.LoadInt64x4(&lanes)
	four32 := archsimd.BroadcastInt32x4(4)
	var sum archsimd.Float64x4
	n := uint(0)
	for row := b.first; row <= b.last; row += g.n[0] {
		from, to := int(g.start[row+b.x0]), int(g.start[row+b.x1+1])
		at := archsimd.BroadcastInt32x4(int32(from)) // grid point k, in every lane
		for k := from; k < to; k += 4 {
			valid := archsimd.BroadcastInt64x4(int64(to - k)).Greater(iota)
			dx, dy := load4(xa, k).Sub(xv), load4(ya, k).Sub(yv)
			d2 := dx.Mul(dx).Add(dy.Mul(dy))
			sum = sum.Add(load4(wa, k).Masked(d2.LessEqual(limitV).And(valid)))
			// The near lanes' points packed to the front of a vector
			// written at the end of the list; the lanes after them are
			// overwritten next (see flatRowGo for a list past its
			// capacity, done here one lane at a time).
			in := d2.LessEqual(firstV).And(valid).ToBits() & 15
			if n <= nearStride-4 {
				at.Add(archsimd.LoadInt32x4(&packNear[in])).Store((*[4]int32)(near[n : n+4]))
				n += uint(nearCount[in])
			} else {
				for q := range uint8(4) {
					near[n%nearStride] = int32(k) + int32(q)
					n += uint(in >> q & 1)
				}
			}
			at = at.Add(four32)
		}
	}
	var s [4]float64
	sum.Store(&s)
	archsimd.ClearAVXUpperBits()
	if c.hasNear {
		c.nearN[i] = uint8(min(n, nearCap+1))
	}
	// Whole numbers: the sum is exact in any order (see density).
	return s[0] + s[1] + s[2] + s[3]
}

// packNear[m] are the lanes set in the mask m, first to last, and
// nearCount[m] how many there are.
var packNear, nearCount = func() (p [16][4]int32, c [16]uint8) {
	for m := range 16 {
		for q := range int32(4) {
			if m>>q&1 != 0 {
				p[m][c[m]] = q
				c[m]++
			}
		}
	}
	return p, c
}()

// nearestHigher2D is nearestHigher2DGo four points at a time: each lane
// keeps its own tracker, with the squared distances as ordered bit
// patterns in signed 64-bit integers (which AVX2 compares), and the four
// are merged at the end.
func (c *Clusterer) nearestHigher2D(i int, r, limit float64) (int32, float64, bool) {
	if !haveAVX2 {
		return c.nearestHigher2DGo(i, r, limit)
	}
	g := &c.grid
	xs, ys, rho, order := c.coords[0], c.coords[1], c.rho, c.order
	x, y := xs[i], ys[i]
	b := g.box2D(x, y, r, int(c.layerTile[i]))
	rhoI, idxI := rho[i], order[i]
	xa, ya, ra, oa := xs[:cap(xs)], ys[:cap(ys)], rho[:cap(rho)], order[:cap(order)]
	xv, yv := archsimd.BroadcastFloat64x4(x), archsimd.BroadcastFloat64x4(y)
	limitV, rhoV, idxV := archsimd.BroadcastFloat64x4(limit), archsimd.BroadcastFloat64x4(rhoI), archsimd.BroadcastFloat64x4(float64(idxI))
	iota := archsimd.LoadInt64x4(&lanes)
	noneV := archsimd.BroadcastInt64x4(math.MaxInt64)
	four := archsimd.BroadcastInt64x4(4)
	best, next, bestJ := noneV, noneV, noneV
	for row := b.first; row <= b.last; row += g.n[0] {
		from, to := int(g.start[row+b.x0]), int(g.start[row+b.x1+1])
		j := archsimd.BroadcastInt64x4(int64(from)).Add(iota) // the lanes' grid points
		for k := from; k < to; k += 4 {
			valid := archsimd.BroadcastInt64x4(int64(to - k)).Greater(iota)
			dx, dy := load4(xa, k).Sub(xv), load4(ya, k).Sub(yv)
			d2 := dx.Mul(dx).Add(dy.Mul(dy))
			rj := load4(ra, k)
			idx := archsimd.LoadInt32x4((*[4]int32)(oa[k : k+4])).ConvertToFloat64()
			higher := rj.Greater(rhoV).Or(rj.Equal(rhoV).And(idx.Greater(idxV)))
			key := d2.AsInt64x4().Merge(noneV, d2.LessEqual(limitV).And(higher).And(valid))
			// nearest.see, lane by lane.
			top := key.Merge(best, key.Greater(best))
			next = top.Merge(next, next.Greater(top))
			closer := best.Greater(key)
			bestJ = j.Merge(bestJ, closer)
			best = key.Merge(best, closer)
			j = j.Add(four)
		}
	}
	var bs, ns, js [4]int64
	best.Store(&bs)
	next.Store(&ns)
	bestJ.Store(&js)
	archsimd.ClearAVXUpperBits()
	nh := newNearest()
	for q := range 4 {
		nh = nh.merge(nearest{best: laneKey(bs[q]), next: laneKey(ns[q]), bestJ: int32(js[q])})
	}
	return nh.result()
}

// merge is the tracker of the candidates that n and o have seen.
func (n nearest) merge(o nearest) nearest {
	n.next = min(n.next, o.next, max(n.best, o.best))
	m := -int32(b2i(o.best < n.best))
	n.bestJ ^= (n.bestJ ^ o.bestJ) & m
	n.best = min(n.best, o.best)
	return n
}

// laneKey is a lane's key as nearest keeps it.
func laneKey(k int64) uint64 {
	if k == math.MaxInt64 {
		return none
	}
	return uint64(k)
}

// load4 loads s[i:i+4] with a single bounds check.
func load4(s []float64, i int) archsimd.Float64x4 {
	return archsimd.LoadFloat64x4((*[4]float64)(s[i : i+4]))
}
