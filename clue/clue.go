package clue

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hitflow/hitflow/internal/prefault"
)

// Timings splits a run into the steps of the paper's Table 1.
type Timings struct {
	Index, Density, NearestHigher, SeedsFollowers, Expansion, Overhead time.Duration
}

// Total is the sum of the steps.
func (t Timings) Total() time.Duration {
	return t.Index + t.Density + t.NearestHigher + t.SeedsFollowers + t.Expansion + t.Overhead
}

// Clusterer runs CLUE and keeps its buffers for the next run, so that
// clustering event after event allocates nothing per point: about 150
// bytes per point of the largest run, and 64 more for the near lists of
// the point-by-point 2D scans up to maxNearPoints. It is not safe for
// concurrent use; Workers goroutines work inside one run.
type Clusterer struct {
	Workers int // 0 or less: GOMAXPROCS
	Timings Timings

	grid grid
	// Per point in grid order (k), and the permutation to input order.
	order     []int32 // k -> input index
	pos       []int32 // input index -> k
	key       []int32 // input index -> tile
	layerTile []int32 // k -> the first tile of its layer
	coords    [][]float64
	weight    []float64
	rho       []float64
	delta     []float64
	nh        []int32 // in grid order, -1 for none
	kind      []uint8 // follower, seed or outlier
	cid       []int32
	// Each point's way up its follower tree: its nearest-higher, then
	// every round of expand twice as far, until the tree's root (a seed or
	// an outlier, which point at themselves).
	up, upNext []int32
	moving     []int32 // expand: the points still moving, per chunk
	movingN    []int32 // expand: how many in each chunk
	chunkSeeds []int32 // seeds per chunk of input, then the chunk's first id
	clusters   int
	// The points within the first nearest-higher radius of each point,
	// listed by the 2D flat density: near[k*nearStride:][:nearN[k]], or
	// nearN[k] > nearCap when they did not fit.
	near    []int32
	nearN   []uint8
	hasNear bool
	// In the 2D flat density of whole weights summing below 2^32, each
	// point's density and input index in one number that orders the
	// points as higher does: rho<<31 | index.
	rank    []uint64
	hasRank bool
	// Whether every weight is a whole number, and their sum (index).
	wholeWeights bool
	weightSum    float64
	extentParts  []extentPart // index: the extent of each chunk of input
	bandCount    []int32      // index: points per chunk of input and band of tiles
	bandStart    []int32      // index: first point of each band of tiles
	dealt        []uint64     // index: tile<<32 | input index, by band
	scratches    []*scratch
	events       Events
	result       Result    // its columns in spent storage (see collect)
	delta1       []float64 // the results' delta for points of one coordinate
}

const (
	follower uint8 = iota
	seed
	outlier
)

func (c *Clusterer) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Run clusters the points. The result is valid until the next run.
func (c *Clusterer) Run(pts *Points, p Params) (*Result, error) {
	start := time.Now()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	in := pts
	c.events.Workers = c.workers()
	pts, err := c.events.View(in) // the values: in index
	if err != nil {
		return nil, err
	}
	c.Timings = Timings{}
	n := pts.Len()
	c.resize(n, pts.Dim())

	t := time.Now()
	if err := c.index(pts, p); err != nil {
		return nil, err
	}
	c.Timings.Index = time.Since(t)

	t = time.Now()
	c.density(p)
	c.Timings.Density = time.Since(t)

	t = time.Now()
	c.nearestHigher(p)
	c.Timings.NearestHigher = time.Since(t)

	t = time.Now()
	c.seedsAndFollowers(p)
	c.Timings.SeedsFollowers = time.Since(t)

	t = time.Now()
	c.expand()
	c.Timings.Expansion = time.Since(t)

	c.collect()
	c.events.Number(in, &c.result)
	c.Timings.Overhead = time.Since(start) - c.Timings.Total()
	return &c.result, nil
}

func (c *Clusterer) resize(n, dim int) {
	// The columns that the row scans read are padded: the vector scans read
	// whole vectors past the end of a row (and mask what they read there).
	c.order, c.key, c.layerTile = padded(c.order, n), prefault.Resize(c.key, n), prefault.Resize(c.layerTile, n)
	// Columns whose steps do not overlap share storage (and the results
	// take that of others, see collect): pos, filled once the index has
	// dealt the points, and then upNext, once the seeds are numbered, that
	// of the points' tiles; up, from the seeds on, that of the layer tiles
	// the scans read; delta, from the nearest-higher search on, that of the
	// weights the densities read.
	c.pos, c.upNext, c.up = c.key[:n], c.key[:n], c.layerTile[:n]
	for len(c.coords) < dim {
		c.coords = append(c.coords, nil)
	}
	c.coords = c.coords[:dim]
	for d := range c.coords {
		c.coords[d] = padded(c.coords[d], n)
	}
	c.weight, c.rho = padded(c.weight, n), padded(c.rho, n)
	c.delta = c.weight[:n]
	c.nh, c.kind, c.cid = prefault.Resize(c.nh, n), prefault.Resize(c.kind, n), prefault.Resize(c.cid, n)
	c.scratch(c.workers() - 1) // one per worker
	if dim < 2 {
		c.delta1 = prefault.Resize(c.delta1, n)
	}
	c.result.IsSeed = prefault.Resize(c.result.IsSeed, n)
}

// padded is prefault.Resize with room for rowPad values past n.
func padded[T any](s []T, n int) []T { return prefault.Resize(s, n+rowPad)[:n] }

// minParallel is the smallest input worth splitting (a variable for tests).
var minParallel = 4096

// parallel runs fn over [0, n) in chunks on the workers. Chunks are taken
// dynamically (dense regions cost more), which cannot change results:
// every index is computed by exactly one call, from shared read-only data.
func (c *Clusterer) parallel(n int, fn func(worker, lo, hi int)) {
	if c.workers() == 1 || n < minParallel {
		fn(0, 0, n)
		return
	}
	chunk := min(1024, max(1, n/(4*c.workers())))
	c.forEach((n+chunk-1)/chunk, func(w, k int) { fn(w, k*chunk, min(n, (k+1)*chunk)) })
}

// inputChunks is how many fixed chunks of the n points a step that must
// combine their results in order (counts, then prefix sums) cuts them
// into: a few per worker, one when the work is serial.
func (c *Clusterer) inputChunks(n int) int {
	if c.workers() > 1 && n >= minParallel {
		return 4 * c.workers()
	}
	return 1
}

// chunkOf is chunk k of chunks equal chunks of [0, n).
func chunkOf(k, chunks, n int) (lo, hi int) { return k * n / chunks, (k + 1) * n / chunks }

// forEach runs fn(worker, k) for every k in [0, count), each once, on the
// workers, which take the next k when they are done with one.
func (c *Clusterer) forEach(count int, fn func(worker, k int)) {
	w := min(c.workers(), count)
	if w <= 1 {
		for k := range count {
			fn(0, k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for id := range w {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= count {
					return
				}
				fn(id, k)
			}
		})
	}
	wg.Wait()
}

// candidate is a point within the search radius and its squared distance.
type candidate struct {
	j  int32
	d2 float64
}

// scratch is one worker's reusable search buffers.
type scratch struct {
	spans []span
	cands []candidate
	tiles []int32 // counters of a band of tiles (index)
	// The near list the density scan writes without lists (see
	// maxNearPoints): overwritten point after point.
	near [nearStride]int32
}

// neighbours returns the points of grid point i's layer whose squared
// distance to it is at most limit (i itself included), for a search of
// radius r.
func (c *Clusterer) neighbours(i int, r, limit float64, s *scratch) []candidate {
	g := &c.grid
	var x [maxDim]float64
	for d := range c.coords {
		x[d] = c.coords[d][i]
	}
	base := int(c.layerTile[i])
	s.spans = g.spans(x[:g.dim], r, base, s.spans[:0])
	total := 0
	for _, sp := range s.spans {
		total += int(sp.hi - sp.lo)
	}
	if cap(s.cands) < total {
		s.cands = make([]candidate, total+total/2)
	}
	// Every point is written and kept when within the limit: no branch
	// to mispredict on the distance test.
	cands := s.cands[:total]
	n := 0
	if g.dim == 2 { // the common case, without the loop over dimensions
		xs, ys := c.coords[0], c.coords[1]
		for _, sp := range s.spans {
			for j := sp.lo; j < sp.hi; j++ {
				dx, dy := xs[j]-x[0], ys[j]-x[1]
				// The conversions forbid fused multiply-adds, so that every
				// distance is the same bits wherever it is computed.
				d2 := float64(dx*dx) + float64(dy*dy)
				cands[n] = candidate{j, d2}
				n += b2i(d2 <= limit)
			}
		}
	} else {
		for _, sp := range s.spans {
			for j := sp.lo; j < sp.hi; j++ {
				var d2 float64
				for d, col := range c.coords {
					dx := col[j] - x[d]
					d2 += float64(dx * dx)
				}
				cands[n] = candidate{j, d2}
				n += b2i(d2 <= limit)
			}
		}
	}
	return cands[:n]
}

func (c *Clusterer) scratch(w int) *scratch {
	for len(c.scratches) <= w {
		c.scratches = append(c.scratches, &scratch{})
	}
	return c.scratches[w]
}

// density computes rho for every point.
func (c *Clusterer) density(p Params) {
	limit := threshold(p.DC)
	// Whole weights make every term a multiple of 0.5 and every sum exact
	// in float64, in any order.
	exact := (p.Kernel.Kind == Flat || p.Kernel.Kind == CMS) && c.wholeWeights && c.weightSum < 1<<50
	k := p.Kernel
	flat2D := exact && k.Kind == Flat && c.grid.dim == 2
	firstLimit := threshold(p.firstRadius())
	c.hasRank = flat2D && c.weightSum < 1<<32
	// The scans point by point write near lists whatever the weights; the
	// scans by blocks, which run only with ranks, list no near points.
	pointScans := !(blockScans() && c.hasRank)
	// A near list is searched by rank (nearestHigherListed).
	n := len(c.order)
	c.hasNear = c.hasRank && pointScans && n <= maxNearPoints
	if flat2D {
		// The ranks take the storage of the index's dealt points, which
		// are done with.
		c.rank = padded(c.dealt[:0], n)
		c.dealt = c.rank
		if c.hasNear {
			c.near, c.nearN = prefault.Resize(c.near, n*nearStride), prefault.Resize(c.nearN, n)
		}
	}
	c.parallel(len(c.order), func(w, lo, hi int) {
		if flat2D {
			c.flatDensity2D(lo, hi, p.DC, limit, firstLimit, c.scratches[w])
			return
		}
		s := c.scratches[w]
		for i := lo; i < hi; i++ {
			var sum, comp float64 // a double-double when not exact
			for _, cd := range c.neighbours(i, p.DC, limit, s) {
				term := c.weight[cd.j]
				if int(cd.j) != i && k.Kind != Flat {
					term *= k.chi(math.Sqrt(cd.d2))
				}
				if exact {
					sum += term
					continue
				}
				t := sum + term
				b := t - sum
				comp += (sum - (t - b)) + (term - b)
				sum = t
			}
			c.rho[i] = sum + comp
		}
	})
}

// masked is v when keep holds, else 0, without a branch or a
// multiplication.
func masked(v float64, keep bool) float64 {
	return math.Float64frombits(math.Float64bits(v) & -uint64(b2i(keep)))
}

// maxNearPoints is the most points that get near lists: at 64 bytes a
// point they took a third of the memory of a run of 10^7 points. Beyond
// it the first radius of the nearest-higher search is searched in the
// tiles, with the same results and, on the paper's calorimeter, no
// measurable cost. A variable for tests.
var maxNearPoints = 1 << 22

// nearSlots is where the density scan lists point i's near points: its
// own list, or, without lists, the worker's scratch.
func (c *Clusterer) nearSlots(i int, s *scratch) []int32 {
	if c.hasNear {
		return c.near[i*nearStride:][:nearStride]
	}
	return s.near[:]
}

// nearCap is the capacity of a point's near list: 15 holds the points
// within half of dc of over 99 % of the paper's calorimeter points (median
// 4, 99th percentile 12); the others take the tiles' path. A list takes
// nearStride slots, the last a spare for the write after the last entry
// (a full list's writes land in it until the count passes the capacity).
const (
	nearCap    = 15
	nearStride = nearCap + 1
)

// nearestHigher computes nh and delta for every point: keep the higher
// candidates (without branches), take the smallest squared distance, and
// look at exact distance ties only among the candidates within a few ulps
// of it, the only ones whose square root can round to the same distance.
func (c *Clusterer) nearestHigher(p Params) {
	rd := newRadii(p)
	twoD := c.grid.dim == 2
	c.parallel(len(c.order), func(w, lo, hi int) {
		s := c.scratches[w]
		if twoD {
			c.nearestHigher2DRange(lo, hi, &rd, s)
			return
		}
		for i := lo; i < hi; i++ {
			c.nh[i], c.delta[i] = c.nearestHigherAt(i, &rd, s)
		}
	})
}

// radii are the radii of the nearest-higher searches and their limits on
// squared distances: a small first radius, where most points find one; in
// 2D a point without a higher one there (a third of the paper's
// calorimeter) is searched again within dc (mid) before dm: three in four
// find one there, in a box a third of dm's.
type radii struct {
	first, firstLimit, mid, midLimit, dm, limit float64
}

func newRadii(p Params) radii {
	dm, first := p.DM(), p.firstRadius()
	mid := min(dm, p.DC)
	return radii{first, threshold(first), mid, threshold(mid), dm, threshold(dm)}
}

// nearestHigher2DPoints sets nh and delta of grid points [lo, hi) in 2D,
// point by point.
func (c *Clusterer) nearestHigher2DPoints(lo, hi int, rd *radii, s *scratch) {
	nh, delta := c.nh[lo:hi], c.delta[lo:hi]
	delta = delta[:len(nh)]
	for k := range nh {
		i := lo + k
		if best, d, ok := c.nearestHigher2DRadii(i, rd); ok {
			nh[k], delta[k] = best, d
			continue
		}
		nh[k], delta[k] = c.nearestHigherAt(i, rd, s)
	}
}

// nearestHigherAt is the nearest-higher of grid point i by the general
// path: any dimension, any kernel, and exact distance ties.
func (c *Clusterer) nearestHigherAt(i int, rd *radii, s *scratch) (int32, float64) {
	rho, order := c.rho, c.order
	rhoI, idxI := rho[i], order[i]
	// Most points have a higher one close by: search a small radius
	// first. A higher point found within it bounds the nearest one, so
	// that search is then complete.
	cands := c.neighbours(i, rd.first, rd.firstLimit, s)
	if !anyHigher(cands, rho, order, rhoI, idxI) {
		cands = c.neighbours(i, rd.dm, rd.limit, s)
	}
	m := 0
	minD2 := math.Inf(1)
	for _, cd := range cands {
		cands[m] = cd
		h := higher(rho[cd.j], order[cd.j], rhoI, idxI)
		m += h
		if h == 1 {
			minD2 = min(minD2, cd.d2)
		}
	}
	best, bestD := int32(-1), math.Inf(1)
	if m > 0 {
		bestD = math.Sqrt(minD2)
		ties := minD2 * (1 + 1e-15)
		for _, cd := range cands[:m] {
			if cd.d2 > ties || math.Sqrt(cd.d2) != bestD {
				continue
			}
			j := cd.j
			if best < 0 || rho[j] > rho[best] || rho[j] == rho[best] && order[j] < order[best] {
				best = j
			}
		}
	}
	return best, bestD
}

// firstRadiusDC is the radius, in units of dc, of the first
// nearest-higher search (measured best on the paper's calorimeter among
// 0.3, 0.5, 1).
const firstRadiusDC = 0.5

// firstRadius is the radius of the first nearest-higher search.
func (p Params) firstRadius() float64 { return min(p.DM(), firstRadiusDC*p.DC) }

// anyHigher reports whether a candidate is higher than (rhoI, idxI).
func anyHigher(cands []candidate, rho []float64, order []int32, rhoI float64, idxI int32) bool {
	for _, cd := range cands {
		if higher(rho[cd.j], order[cd.j], rhoI, idxI) == 1 {
			return true
		}
	}
	return false
}

// nearestHigher2DRadii searches within the first radius (the near list
// when there is one), then mid, then dm, and stops at the first search
// that decides (see [nearest]).
func (c *Clusterer) nearestHigher2DRadii(i int, rd *radii) (int32, float64, bool) {
	var best int32
	var d float64
	var ok bool
	if c.hasNear && c.nearN[i] <= nearCap {
		best, d, ok = c.nearestHigherListed(i)
	} else {
		best, d, ok = c.nearestHigher2D(i, rd.first, rd.firstLimit)
	}
	if !ok {
		best, d, ok = c.nearestHigher2D(i, rd.mid, rd.midLimit)
	}
	return c.nearestHigher2DBeyond(i, rd, best, d, ok)
}

// nearestHigher2DBeyond completes a search that found (best, d, ok)
// within mid: when nothing was higher there, the search within dm.
func (c *Clusterer) nearestHigher2DBeyond(i int, rd *radii, best int32, d float64, ok bool) (int32, float64, bool) {
	if !ok && d == noneFound && rd.mid < rd.dm {
		best, d, ok = c.nearestHigher2D(i, rd.dm, rd.limit)
	}
	// Nothing higher within dm decides too (the isolated noise).
	return best, d, ok || d == noneFound
}

// nearestHigherListed is nearestHigher2D within the first radius over the
// point's near list, which holds exactly the points within that radius.
func (c *Clusterer) nearestHigherListed(i int) (int32, float64, bool) {
	xs, ys, rank := c.coords[0], c.coords[1], c.rank
	// Columns of one length: a check of j against xs covers all three.
	ys, rank = ys[:len(xs)], rank[:len(xs)]
	x, y, rankI := xs[i], ys[i], rank[i]
	nh := newNearest()
	for _, j := range c.near[i*nearStride : i*nearStride+int(c.nearN[i])] {
		dx, dy := xs[j]-x, ys[j]-y
		d2 := float64(dx*dx) + float64(dy*dy)
		nh = nh.see(d2, b2i(rank[j] > rankI), j)
	}
	return nh.result()
}

// setRank sets the rank of grid point i from its density (see rank).
func (c *Clusterer) setRank(i int) { c.rank[i] = uint64(c.rho[i])<<31 | uint64(c.order[i]) }

// higher is 1 when a point of density rhoJ and input index idxJ is higher
// than one of rhoI, idxI (the density, then the index breaks ties).
func higher(rhoJ float64, idxJ int32, rhoI float64, idxI int32) int {
	return b2i(rhoJ > rhoI) | b2i(rhoJ == rhoI)&b2i(idxJ > idxI)
}

// nearest keeps, in a scan of candidates, the smallest squared distance
// among the eligible ones (as ordered bit patterns, with the others mapped
// to the largest) and the next smallest, without branches on the data.
type nearest struct {
	best, next uint64
	bestJ      int32
}

const none = math.MaxUint64

// noneFound is the distance of a scan without an eligible candidate.
var noneFound = math.Inf(1)

func newNearest() nearest { return nearest{none, none, -1} }

// see returns n having seen candidate j at squared distance d2, eligible
// when ok is 1. A value in and out, not a pointer: the compiler then keeps
// the three fields in registers through the scan.
func (n nearest) see(d2 float64, ok int, j int32) nearest {
	// Non-negative floats order as their bits; a miss becomes none.
	key := math.Float64bits(d2) | (uint64(ok) - 1)
	n.next = min(n.next, max(key, n.best))
	// A select by mask, not a branch: the branch the compiler makes of an
	// if follows the data and mispredicts.
	m := -int32(b2i(key < n.best))
	n.bestJ ^= (n.bestJ ^ j) & m
	n.best = min(n.best, key)
	return n
}

// result is the nearest eligible candidate and its distance, or ok =
// false when the scan cannot decide alone: no eligible candidate (the
// distance is then noneFound: a larger search may find one), or a second
// one whose distance may round to the same value (an exact tie), which
// the general path resolves.
func (n nearest) result() (int32, float64, bool) {
	if n.best == none {
		return -1, noneFound, false
	}
	d2 := math.Float64frombits(n.best)
	if n.next != none && math.Float64frombits(n.next) <= d2*(1+1e-15) {
		return -1, 0, false
	}
	return n.bestJ, math.Sqrt(d2), true
}

// b2i is 1 for true and 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// seedsAndFollowers classifies the points, numbers the seeds in input
// order (their cluster ids) and points each follower up at its
// nearest-higher.
func (c *Clusterer) seedsAndFollowers(p Params) {
	n := len(c.order)
	c.parallel(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			kind, up := follower, c.nh[i]
			switch {
			case c.delta[i] > p.DeltaC && c.rho[i] >= p.RhoC:
				kind, up = seed, int32(i)
			case c.delta[i] > p.DeltaO && c.rho[i] < p.RhoC:
				kind, up = outlier, int32(i)
			}
			if up < 0 { // not met with finite deltas: a follower of nothing
				up = int32(i)
			}
			c.kind[i], c.up[i], c.cid[i] = kind, up, -1
		}
	})
	// Seed ids in input order: count the seeds of each chunk of input,
	// then number each chunk's from the total before it.
	chunks := c.inputChunks(n)
	c.chunkSeeds = prefault.Resize(c.chunkSeeds, chunks)
	c.forEach(chunks, func(_, k int) {
		count := int32(0)
		lo, hi := chunkOf(k, chunks, n)
		for _, g := range c.pos[lo:hi] {
			count += int32(b2i(c.kind[g] == seed))
		}
		c.chunkSeeds[k] = count
	})
	first := int32(0)
	for k, count := range c.chunkSeeds[:chunks] {
		c.chunkSeeds[k], first = first, first+count
	}
	c.clusters = int(first)
	c.forEach(chunks, func(_, k int) {
		id := c.chunkSeeds[k]
		lo, hi := chunkOf(k, chunks, n)
		for _, g := range c.pos[lo:hi] {
			if c.kind[g] == seed {
				c.cid[g] = id
				id++
			}
		}
	})
}

// expand gives every follower the id of its tree's root (-1 under an
// outlier): by path halving layer by layer (see expandSerial) when the
// layers can share the workers, else by pointer jumping: each round
// points every point at the point that its own points at, so a chain of
// length d takes log2(d) rounds, each a parallel pass with no order
// between the points (the rounds read one array and write the other, so
// the result does not depend on the workers). Either way each point ends
// at its tree's root, whatever the order of the work.
func (c *Clusterer) expand() {
	n := len(c.order)
	if c.workers() == 1 || n < minParallel {
		c.expandSerial(0, n)
		return
	}
	// A follower's nearest-higher is in its layer, so no tree leaves its
	// layer: the layers can be expanded by path halving side by side,
	// unless one of them holds so many points that it would leave the
	// other workers idle.
	g := &c.grid
	per, layers := g.perLayer, g.tiles/g.perLayer
	largest := 0
	for l := range layers {
		largest = max(largest, int(g.start[(l+1)*per]-g.start[l*per]))
	}
	if largest <= n/(2*c.workers()) {
		c.forEach(layers, func(_, l int) { c.expandSerial(int(g.start[l*per]), int(g.start[(l+1)*per])) })
		return
	}
	up, next := c.up[:n], c.upNext[:n]
	// Each fixed chunk of points keeps the ones still moving at the front
	// of its part of moving: a point that did not move in a round has the
	// same value in both arrays and is not visited again, so the rounds
	// after the first few visit the deep chains only.
	chunks := c.inputChunks(n)
	c.moving, c.movingN = prefault.Resize(c.moving, n), prefault.Resize(c.movingN, chunks)
	for round := 0; ; round++ {
		var left atomic.Int64
		c.forEach(chunks, func(_, k int) {
			lo, hi := chunkOf(k, chunks, n)
			moving := c.moving[lo:hi]
			m := 0
			step := func(i int32) {
				u := up[up[i]]
				next[i] = u
				moving[m] = i
				m += b2i(u != up[i])
			}
			if round == 0 {
				for i := lo; i < hi; i++ {
					step(int32(i))
				}
			} else {
				for _, i := range moving[:c.movingN[k]] {
					step(i)
				}
			}
			c.movingN[k] = int32(m)
			left.Add(int64(m))
		})
		up, next = next, up
		if left.Load() == 0 {
			break
		}
	}
	c.parallel(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if c.kind[i] == follower {
				c.cid[i] = c.cid[up[i]]
			}
		}
	})
}

// expandSerial is expand on one worker for grid points [lo, hi), whose
// trees stay among them: each point finds its tree's root and halves the
// path on the way (every point passed then points at the one after next),
// so later points find it in a step or two: one pass, where the pointer
// jumping makes one per doubling of the deepest chain.
func (c *Clusterer) expandSerial(lo, hi int) {
	n := len(c.order)
	up, kind, cid := c.up[:n], c.kind[:n], c.cid[:n]
	for i := lo; i < hi; i++ {
		j := int32(i)
		for up[j] != j {
			up[j] = up[up[j]]
			j = up[j]
		}
		if kind[i] == follower {
			cid[i] = cid[j]
		}
	}
}

// collect writes the result in input order.
func (c *Clusterer) collect() {
	r := &c.result
	n := len(c.order)
	// The results in input order go where the columns spent by then were
	// (grid-ordered coordinates, the tiles, the layer tiles and the
	// follower links that took their places): with the sharing of resize,
	// at 10^7 points 400 MB less at the peak. They are valid until the
	// next run, as ever, which takes that storage back.
	r.Rho, r.NH, r.ClusterID = c.coords[0][:n], c.key[:n], c.layerTile[:n]
	if len(c.coords) > 1 {
		r.Delta = c.coords[1][:n]
	} else {
		r.Delta = c.delta1[:n]
	}
	var outliers atomic.Int64
	c.parallel(n, func(_, lo, hi int) {
		// Columns of one length each side: one bounds check of i and of k
		// covers them all.
		rho, delta, nh, isSeed, cid := r.Rho[:n], r.Delta[:n], r.NH[:n], r.IsSeed[:n], r.ClusterID[:n]
		order := c.order[:n]
		inputs := order[lo:hi]
		m := len(inputs)
		gRho, gDelta, gNH, gKind, gCID := c.rho[lo:hi][:m], c.delta[lo:hi][:m], c.nh[lo:hi][:m], c.kind[lo:hi][:m], c.cid[lo:hi][:m]
		count := 0
		for k, i := range inputs {
			rho[i], delta[i] = gRho[k], gDelta[k]
			up := int32(-1)
			if j := gNH[k]; j >= 0 {
				up = order[j]
			}
			nh[i], isSeed[i], cid[i] = up, gKind[k] == seed, gCID[k]
			count += b2i(gCID[k] < 0)
		}
		outliers.Add(int64(count))
	})
	r.Clusters = c.clusters
	r.Outliers = int(outliers.Load())
}

// Run is a convenience for one run with a fresh Clusterer.
func Run(pts *Points, p Params, workers int) (*Result, error) {
	c := &Clusterer{Workers: workers}
	return c.Run(pts, p)
}
