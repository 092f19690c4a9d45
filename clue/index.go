package clue

// bandBits sets the bands of the index's sort: runs of 1<<bandBits
// consecutive tiles, whose counters (16 KiB) stay in the L1 cache.
const bandBits = 12

// index builds the grid and sorts the points into it, stably: each tile
// lists its points in input order.
func (c *Clusterer) index(pts *Points, p Params) error {
	if err := c.grid.build(pts, p); err != nil {
		return err
	}
	n := pts.Len()
	g := &c.grid
	c.parallel(n, func(_, lo, hi int) { g.tilesOf(pts, lo, hi, c.key) })
	c.sortByTile(n)
	per := int32(g.perLayer)
	c.parallel(n, func(_, lo, hi int) {
		order := c.order[lo:hi]
		for k, i := range order {
			c.pos[i] = int32(lo + k)
			c.layerTile[lo+k] = c.key[i] / per * per
			c.weight[lo+k] = pts.Weight[i]
		}
		// Column by column: one loop over the dimensions per point cost
		// more than the copies.
		for d, col := range c.coords {
			src, dst := pts.Coords[d], col[lo:hi]
			for k, i := range order {
				dst[k] = src[i]
			}
		}
	})
	return nil
}

// sortByTile sets c.order to the input indices sorted by tile (stable)
// and the grid's tile starts, by a counting sort in two passes that both
// run on all workers: the input, cut into chunks, is dealt to bands of
// tiles, then each band is sorted into its tiles. One pass over the whole
// tile table (millions of counters, four per point at most) would be
// serial and miss the cache on every point.
func (c *Clusterer) sortByTile(n int) {
	g := &c.grid
	bands := g.tiles>>bandBits + 1
	chunks := c.inputChunks(n)
	c.bandCount = grow(c.bandCount, chunks*bands)
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
	c.bandStart = grow(c.bandStart, bands+1)
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
	dealt := c.pos[:n] // scratch until index fills pos
	c.forEach(chunks, func(_, k int) {
		next := c.bandCount[k*bands : (k+1)*bands]
		lo, hi := chunkOf(k, chunks, n)
		for i, t := range c.key[lo:hi] {
			b := t >> bandBits
			dealt[next[b]] = int32(lo + i)
			next[b]++
		}
	})
	g.start = grow(g.start, g.tiles+1)
	c.forEach(bands, func(w, b int) {
		t0, t1 := int32(b<<bandBits), int32(min((b+1)<<bandBits, g.tiles))
		s := c.scratches[w]
		s.tiles = grow(s.tiles, 1<<bandBits)
		count := s.tiles[:t1-t0]
		clear(count)
		band := dealt[c.bandStart[b]:c.bandStart[b+1]]
		for _, i := range band {
			count[c.key[i]-t0]++
		}
		at := c.bandStart[b]
		for t := range count {
			g.start[t0+int32(t)] = at
			at, count[t] = at+count[t], at
		}
		for _, i := range band {
			t := c.key[i] - t0
			c.order[count[t]] = i
			count[t]++
		}
	})
	g.start[g.tiles] = int32(n)
}
