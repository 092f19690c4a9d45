package clue

import (
	"fmt"
	"math"

	"github.com/hitflow/hitflow/internal/prefault"
)

// bandBits sets the bands of the index's sort: runs of 1<<bandBits
// consecutive tiles, whose counters (16 KiB) stay in the L1 cache.
const bandBits = 12

// index checks the points' values, builds the grid and sorts the points
// into it, stably: each tile lists its points in input order.
func (c *Clusterer) index(pts *Points, p Params) error {
	if pts.Dim() > maxDim {
		return fmt.Errorf("clue: %d dimensions, at most %d supported", pts.Dim(), maxDim)
	}
	ext, err := c.extents(pts, nil)
	if err != nil {
		return err
	}
	if err := c.grid.build(pts, p, &ext); err != nil {
		return err
	}
	c.wholeWeights, c.weightSum = ext.wholeWeights, ext.weightSum
	g := &c.grid
	c.parallel(pts.Len(), func(_, lo, hi int) { g.tilesOf(pts, lo, hi, c.key) })
	c.sortByTile(pts)
	return nil
}

// sortByTile sorts the points into their tiles, stably, and writes the
// columns in grid order (order, pos, layerTile, weight, coords) and the
// grid's tile starts, by a counting sort in two passes that both run on
// all workers: the input, cut into chunks, is dealt to bands of tiles,
// then each band is sorted into its tiles. One pass over the whole tile
// table (millions of counters, four per point at most) would be serial
// and miss the cache on every point. The points are dealt with their
// tiles packed beside them, so that the band's sort reads one array in
// order instead of looking up the tile of each point twice, and each band
// writes its own part of the columns: the columns are sorted band by
// band, on all workers, while the band's points are in the cache.
func (c *Clusterer) sortByTile(pts *Points) {
	n := pts.Len()
	g := &c.grid
	bands := g.tiles>>bandBits + 1
	chunks := c.inputChunks(n)
	c.bandCount = prefault.Resize(c.bandCount, chunks*bands)
	clear(c.bandCount)
	c.forEach(chunks, func(_, k int) {
		count := c.bandCount[k*bands : (k+1)*bands]
		lo, hi := chunkOf(k, chunks, n)
		for _, t := range c.key[lo:hi] {
			count[t>>bandBits]++
		}
	})
	// Where each chunk's points of each band go: bands in order, and in a
	// band the chunks in order, which keeps the sort stable.
	c.bandStart = prefault.Resize(c.bandStart, bands+1)
	at := int32(0)
	for b := range bands {
		c.bandStart[b] = at
		for k := range chunks {
			count := c.bandCount[k*bands+b]
			c.bandCount[k*bands+b] = at
			at += count
		}
	}
	c.bandStart[bands] = at
	c.dealt = prefault.Resize(c.dealt, n)
	c.forEach(chunks, func(_, k int) {
		next := c.bandCount[k*bands : (k+1)*bands]
		lo, hi := chunkOf(k, chunks, n)
		for i, t := range c.key[lo:hi] {
			b := t >> bandBits
			c.dealt[next[b]] = uint64(t)<<32 | uint64(lo+i)
			next[b]++
		}
	})
	g.start = prefault.Resize(g.start, g.tiles+1)
	c.forEach(bands, func(w, b int) {
		t0, t1 := int32(b<<bandBits), int32(min((b+1)<<bandBits, g.tiles))
		s := c.scratches[w]
		s.tiles = prefault.Resize(s.tiles, 1<<bandBits)
		count := s.tiles[:t1-t0]
		clear(count)
		first, end := c.bandStart[b], c.bandStart[b+1]
		band := c.dealt[first:end]
		for _, v := range band {
			count[int32(v>>32)-t0]++
		}
		at := first
		for t := range count {
			g.start[t0+int32(t)] = at
			at, count[t] = at+count[t], at
		}
		order, pos := c.order, c.pos
		for _, v := range band {
			t, i := int32(v>>32)-t0, int32(uint32(v))
			order[count[t]], pos[i] = i, count[t]
			count[t]++
		}
		c.sortColumns(pts, first, end)
		// Each layer's part of the band has the layer's first tile.
		per := int32(g.perLayer)
		for layer, from := t0/per*per, first; from < end; layer += per {
			to := end
			if layer+per < t1 {
				to = g.start[layer+per]
			}
			fill(c.layerTile[from:to], layer)
			from = to
		}
	})
	g.start[g.tiles] = int32(n)
}

// sortColumns copies the weights and coordinates of grid points [lo, hi)
// from the input: in 2D the three columns in one loop (the gathers
// overlap), otherwise column by column (a loop over the dimensions per
// point cost more than the copies).
func (c *Clusterer) sortColumns(pts *Points, lo, hi int32) {
	order := c.order[lo:hi]
	weight := c.weight[lo:hi][:len(order)]
	if len(c.coords) == 2 {
		xs, ys := c.coords[0][lo:hi][:len(order)], c.coords[1][lo:hi][:len(order)]
		W, X, Y := pts.Weight, pts.Coords[0], pts.Coords[1]
		for k, i := range order {
			weight[k], xs[k], ys[k] = W[i], X[i], Y[i]
		}
		return
	}
	for k, i := range order {
		weight[k] = pts.Weight[i]
	}
	for d, col := range c.coords {
		src, dst := pts.Coords[d], col[lo:hi][:len(order)]
		for k, i := range order {
			dst[k] = src[i]
		}
	}
}

// fill sets every element of s to v.
func fill[T any](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// extentPart is the extent of a chunk of the input, and whether it holds
// a value that is not allowed.
type extentPart struct {
	extent
	bad bool
}

// extent is the span of the points: of each coordinate and of the layer
// ids (zeros for no points).
type extent struct {
	lo, hi     [maxDim]float64
	lmin, lmax int32
	// Whether every weight is a whole number, and their sum (see density).
	wholeWeights bool
	weightSum    float64
}

// extents returns the points' extent after checking, in the same pass,
// that every coordinate is finite and every weight finite and not
// negative: one pass over the columns on all workers (it is the first look
// at the input; a separate check and the grid's extent were serial
// passes). A bad value is reported by firstBadValue, which names the
// point. With to, the weights and coordinates are also copied there, a
// chunk of a column at a time as the pass leaves it in the cache.
func (c *Clusterer) extents(pts, to *Points) (extent, error) {
	n := pts.Len()
	if n == 0 {
		return extent{wholeWeights: true}, nil
	}
	chunks := c.inputChunks(n)
	c.extentParts = prefault.Resize(c.extentParts, chunks)
	parts := c.extentParts
	c.forEach(chunks, func(_, k int) {
		a, b := chunkOf(k, chunks, n)
		pt := &parts[k]
		for d := range pts.Dim() {
			pt.lo[d], pt.hi[d] = math.Inf(1), math.Inf(-1) // an empty chunk
		}
		pt.lmin, pt.lmax = math.MaxInt32, math.MinInt32
		// v - v is 0 for a finite v and NaN otherwise, so the sums are 0
		// exactly when every value is finite.
		var finite, sum float64
		negative, fraction := 0, 0
		for _, w := range pts.Weight[a:b] {
			finite += w - w
			negative |= b2i(w < 0)
			fraction |= b2i(w != float64(int64(w))) // a huge w converts to garbage, unequal
			sum += w
		}
		pt.wholeWeights, pt.weightSum = fraction == 0, sum
		if to != nil { // a chunk's column is copied as it sits in the cache
			copy(to.Weight[a:b], pts.Weight[a:b])
		}
		for d, col := range pts.Coords {
			l, h := pt.lo[d], pt.hi[d]
			for _, v := range col[a:b] {
				finite += v - v
				if v < l {
					l = v
				}
				if v > h {
					h = v
				}
			}
			pt.lo[d], pt.hi[d] = l, h
			if to != nil {
				copy(to.Coords[d][a:b], col[a:b])
			}
		}
		if len(pts.Layer) > 0 {
			for _, l := range pts.Layer[a:b] {
				pt.lmin, pt.lmax = min(pt.lmin, l), max(pt.lmax, l)
			}
		}
		pt.bad = finite != 0 || negative != 0
	})
	e := parts[0].extent
	for _, pt := range parts {
		if pt.bad {
			return e, pts.firstBadValue()
		}
		for d := range pts.Dim() {
			e.lo[d], e.hi[d] = min(e.lo[d], pt.lo[d]), max(e.hi[d], pt.hi[d])
		}
		e.lmin, e.lmax = min(e.lmin, pt.lmin), max(e.lmax, pt.lmax)
	}
	e.weightSum = 0
	for _, pt := range parts {
		e.wholeWeights = e.wholeWeights && pt.wholeWeights
		e.weightSum += pt.weightSum
	}
	return e, nil
}
