package pixel

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is the number of new hits per buffer of [ChunkedClusterer]:
// 64 chunks, enough to keep the workers busy, small enough for the caches.
const DefaultBuffer = 1 << 18

// chunkHits is the chunk length: short enough that a chunk's hits stay in
// the L1 cache and the matrix holds few stale references, long enough that
// the borders are a small part.
const chunkHits = 4096

// ChunkedClusterer is the chunked union-find of Čelko et al. (section 4,
// algorithms 2 and 3), the algorithm the paper ran on a GPU, here on
// goroutines and written step for step as an accelerator would run it:
//
//  1. Buffer filling: time-ordered hits (the reorder stage has sorted them
//     by ToA with a radix sort and released them once t_closing passed)
//     fill a buffer.
//  2. The buffer is cut into chunks; each chunk is clustered on its own
//     (one work item each) with a sensor-sized matrix of last-hit
//     references encoded relative to the chunk start, and a union-find
//     forest over the buffer whose roots are the earliest hits. The
//     matrix is restored afterwards by visiting the chunk's hits.
//  3. Border grouping: for each border between chunks, the hits within dt
//     before it are put in a matrix and the hits within dt after it look
//     up their nine pixels; the pairs found are joined.
//  4. Clusters are labelled by their roots, closed ones get their
//     features and are sent in root order (by first ToA), and the hits of
//     clusters that the next buffer can still reach are carried into it.
//
// It implements the local definition, whose clusters are connected
// components; [NewStream] serves the incremental definitions in chunked
// mode with [Lanes] on chunk-sized windows.
type ChunkedClusterer struct {
	cfg     Config
	workers int
	size    int // new hits per buffer
	chunk   int // hits per chunk
	keep    bool
	stride  int
	offsets [9]int32
	mats    [][]int32 // a pixel matrix per worker, all zero between uses
	occs    [][]byte  // its occupancy bits, small enough for L1

	buf        Hits
	seq        []int64 // arrival numbers
	carried    int     // hits at the front of buf carried from the last buffer
	calibrated bool
	parent     []int32
	pairs      [][]int32 // per border: pairs of hits to join
	count      []int32   // per root: hits, then the start of its members
	members    []int32   // hits grouped by root, in arrival order
	open       []bool    // per root: the next buffer can reach it
	carry      Hits
	carrySeq   []int64

	pending Clusters // closed clusters waiting for an earlier open one
	parts   []part
	closed  Clusters
	merged  Clusters
	now     Time
	nextSeq int64
	nextID  int64
	stats   Stats
	out     Clusters
}

// NewChunkedClusterer returns a chunked union-find clusterer for the local
// definition with the given number of workers (GOMAXPROCS if < 1) and new
// hits per buffer ([DefaultBuffer] if < 1).
func NewChunkedClusterer(cfg Config, workers, bufferHits int) (*ChunkedClusterer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Definition != Local {
		return nil, fmt.Errorf("pixel: the chunked union-find clusters the local definition, not %v", cfg.Definition)
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	if bufferHits < 1 {
		bufferHits = DefaultBuffer
	}
	c := &ChunkedClusterer{cfg: cfg, workers: workers, size: bufferHits, chunk: chunkHits, stride: cfg.Width + 2, now: -1 << 63}
	c.offsets = neighbourOffsets(c.stride)
	c.mats, c.occs = make([][]int32, workers), make([][]byte, workers)
	for w := range c.mats {
		c.mats[w] = make([]int32, c.stride*(cfg.Height+2))
		c.occs[w] = make([]byte, len(c.mats[w])/8+16)
	}
	c.out.Reset()
	c.pending.Reset()
	return c, nil
}

// KeepMembers makes the emitted [Clusters] carry the hits of each cluster.
func (c *ChunkedClusterer) KeepMembers(keep bool) { c.keep = keep }

// Stats returns the counts so far.
func (c *ChunkedClusterer) Stats() Stats { return c.stats }

// Add takes time-ordered hits and returns the clusters finished so far,
// valid until the next call.
func (c *ChunkedClusterer) Add(h *Hits) *Clusters {
	c.out.Reset()
	c.stats.Hits += int64(h.Len())
	if h.Calibrated() && !c.calibrated {
		c.calibrated = true
		c.buf.E = append(c.buf.E[:0], make([]float32, c.buf.Len())...)
	}
	width, height := c.cfg.Width, c.cfg.Height
	for i := 0; i < h.Len(); {
		if int(h.X[i]) >= width || int(h.Y[i]) >= height {
			c.stats.OutOfRange++
			i++
			continue
		}
		j := i
		for end := min(h.Len(), i+c.size+c.carried-c.buf.Len()); j < end && int(h.X[j]) < width && int(h.Y[j]) < height; j++ {
			if t := h.ToA[j]; t < c.now {
				c.stats.Late++
			} else {
				c.now = t
			}
			c.seq = append(c.seq, c.nextSeq)
			c.nextSeq++
		}
		c.buf.AppendRange(h, i, j)
		i = j
		if c.buf.Len()-c.carried == c.size {
			c.process(false)
		}
	}
	c.stats.Clustered = c.stats.Hits - c.stats.OutOfRange
	return &c.out
}

// Flush clusters the rest and returns every remaining cluster.
func (c *ChunkedClusterer) Flush() *Clusters {
	c.out.Reset()
	c.process(true)
	return &c.out
}

// process clusters the buffer; at the end of the stream nothing is carried.
func (c *ChunkedClusterer) process(final bool) {
	n := c.buf.Len()
	c.parent = growLen(c.parent, n)
	for i := range c.parent {
		c.parent[i] = int32(i)
	}
	chunk := c.chunk
	chunks := (n + chunk - 1) / chunk
	c.parallel(chunks, func(w, k int) {
		c.clusterChunk(c.mats[w], c.occs[w], k*chunk, min(n, (k+1)*chunk))
	})
	for len(c.pairs) < chunks {
		c.pairs = append(c.pairs, nil)
	}
	c.parallel(chunks-1, func(w, k int) {
		c.pairs[k] = c.borderPairs(c.mats[w], (k+1)*chunk, c.pairs[k][:0])
	})
	for _, p := range c.pairs[:max(0, chunks-1)] {
		for i := 0; i < len(p); i += 2 {
			union(c.parent, p[i], p[i+1])
		}
	}
	c.group(final)
	c.emit(final)
}

// parallel runs f for tasks 0..n-1 on the workers.
func (c *ChunkedClusterer) parallel(n int, f func(worker, task int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(c.workers, n) {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				f(w, k)
			}
		})
	}
	wg.Wait()
}

// clusterChunk joins every hit of [lo, hi) with the last hits of its nine
// pixels within the chunk that are at most dt away (algorithm 2). Sorted
// hits make the last hit of a pixel the only one to look at: an older one
// within dt is already joined to it.
func (c *ChunkedClusterer) clusterChunk(mat []int32, occ []byte, lo, hi int) {
	bx, by, toa, parent := c.buf.X, c.buf.Y, c.buf.ToA, c.parent
	stride, dt, base := int32(c.stride), c.cfg.DtMax, int32(lo)-1
	for i := int32(lo); i < int32(hi); i++ {
		p := int32(by[i]+1)*stride + int32(bx[i]) + 1
		t := toa[i]
		// The occupancy bits say which of the nine pixels hold a hit; most
		// hits find none.
		m := occupied3(occ, p-stride-1) | occupied3(occ, p-1)<<3 | occupied3(occ, p+stride-1)<<6
		if m == 0 {
			mat[p] = i - base
			occ[p>>3] |= 1 << (p & 7)
			continue
		}
		for ; m != 0; m &= m - 1 {
			r := mat[p+c.offsets[bits.TrailingZeros64(m)]]
			if d := t - toa[base+r]; d <= dt && d >= -dt {
				union(parent, i, base+r)
			}
		}
		// A late hit does not hide a later one.
		if r := mat[p]; r == 0 || toa[base+r] <= t {
			mat[p] = i - base
			occ[p>>3] |= 1 << (p & 7)
		}
	}
	c.restore(mat, lo, hi)
	for i := lo; i < hi; i++ {
		p := (int(by[i])+1)*c.stride + int(bx[i]) + 1
		occ[p>>3] = 0
	}
}

// borderPairs appends the pairs of neighbour hits at most dt apart across
// the chunk border before hit b.
func (c *ChunkedClusterer) borderPairs(mat []int32, b int, dst []int32) []int32 {
	bx, by, toa := c.buf.X, c.buf.Y, c.buf.ToA
	stride, dt := int32(c.stride), c.cfg.DtMax
	lo := b
	for lo > 0 && toa[lo-1] >= toa[b]-dt {
		lo--
	}
	hi := b
	for hi < len(toa) && toa[hi] <= toa[b-1]+dt {
		hi++
	}
	base := int32(lo) - 1
	for i := int32(lo); i < int32(b); i++ {
		p := int32(by[i]+1)*stride + int32(bx[i]) + 1
		if r := mat[p]; r == 0 || toa[base+r] <= toa[i] {
			mat[p] = i - base
		}
	}
	for j := int32(b); j < int32(hi); j++ {
		p := int32(by[j]+1)*stride + int32(bx[j]) + 1
		for _, o := range c.offsets {
			if r := mat[p+o]; r != 0 {
				if d := toa[j] - toa[base+r]; d <= dt && d >= -dt {
					dst = append(dst, base+r, j)
				}
			}
		}
	}
	c.restore(mat, lo, b)
	return dst
}

// restore clears the matrix entries of hits [lo, hi).
func (c *ChunkedClusterer) restore(mat []int32, lo, hi int) {
	for i := lo; i < hi; i++ {
		mat[(int(c.buf.Y[i])+1)*c.stride+int(c.buf.X[i])+1] = 0
	}
}

// union joins the trees of a and b under the smaller root.
func union(parent []int32, a, b int32) {
	a, b = find(parent, a), find(parent, b)
	switch {
	case a < b:
		parent[b] = a
	case b < a:
		parent[a] = b
	}
}

// group labels every hit with its root, lists the members of each root in
// arrival order and marks the clusters the next buffer can reach: those
// with a hit at most dt before the latest time.
func (c *ChunkedClusterer) group(final bool) {
	n := c.buf.Len()
	parent := c.parent
	c.count = growLen(c.count, n+1)
	clear(c.count)
	c.open = growLen(c.open, n)
	clear(c.open)
	limit := c.now - c.cfg.DtMax
	for i := range n {
		r := find(parent, int32(i))
		parent[i] = r
		c.count[r+1]++
		if !final && c.buf.ToA[i] >= limit {
			c.open[r] = true
		}
	}
	for i := 1; i <= n; i++ {
		c.count[i] += c.count[i-1]
	}
	c.members = growLen(c.members, n)
	for i := range n {
		r := parent[i]
		c.members[c.count[r]] = int32(i)
		c.count[r]++
	}
	// count[r] is now the end of r's members; the start is count[r-1].
}

// emit computes the features of the closed clusters, sends them in root
// order behind any earlier open one, and carries the open ones.
func (c *ChunkedClusterer) emit(final bool) {
	n := c.buf.Len()
	b := &c.buf
	calibrated := c.calibrated
	c.closed.Reset()
	c.carry.Reset()
	c.carrySeq = c.carrySeq[:0]
	// Features in parallel over ranges of roots, then in order.
	parts := 1
	if n >= 4*c.chunk {
		parts = 4 * c.workers
	}
	for len(c.parts) < parts {
		c.parts = append(c.parts, part{})
	}
	c.parallel(parts, func(_, k int) {
		c.summariseRoots(&c.parts[k], n*k/parts, n*(k+1)/parts)
	})
	firstOpen := int64(1<<63 - 1)
	for k := range parts {
		firstOpen = min(firstOpen, c.parts[k].firstOpen)
	}
	// The hits of open clusters, in arrival order, start the next buffer.
	for i, r := range c.parent[:n] {
		if c.open[r] {
			c.carry.AppendFrom(b, i)
			c.carrySeq = append(c.carrySeq, c.seq[i])
		}
	}
	// Send the closed clusters, merged with the pending ones if any, up to
	// the first open one; keep the rest pending.
	if c.pending.Len() == 0 {
		for k := range parts {
			c.release(&c.parts[k].closed, firstOpen)
		}
	} else {
		c.closed.Reset()
		for k := range parts {
			c.closed.appendAll(&c.parts[k].closed)
		}
		c.merged.Reset()
		mergeByRoot(&c.merged, &c.pending, &c.closed)
		c.pending.Reset()
		c.release(&c.merged, firstOpen)
	}
	c.stats.Clusters = c.nextID
	b.Reset()
	b.AppendRange(&c.carry, 0, c.carry.Len())
	if calibrated && !b.Calibrated() {
		b.E = append(b.E[:0], make([]float32, b.Len())...)
	}
	c.seq = append(c.seq[:0], c.carrySeq...)
	c.carried = b.Len()
}

// release sends the clusters of src (in root order) whose root is before
// firstOpen, with their ids, and keeps the others pending.
func (c *ChunkedClusterer) release(src *Clusters, firstOpen int64) {
	k := 0
	for k < src.Len() && src.root[k] < firstOpen {
		k++
	}
	at := c.out.Len()
	c.out.appendRange(src, 0, k)
	for i := at; i < c.out.Len(); i++ {
		c.out.ID[i] = c.nextID
		c.nextID++
	}
	c.pending.appendRange(src, k, src.Len())
}

// part is the share of one worker in summarising a buffer.
type part struct {
	closed    Clusters
	firstOpen int64 // arrival number of the first open cluster's root
}

// summariseRoots computes the features of the closed clusters whose roots
// are in [lo, hi).
func (c *ChunkedClusterer) summariseRoots(p *part, lo, hi int) {
	b := &c.buf
	out := &p.closed
	out.Reset()
	out.Calibrated = c.calibrated
	p.firstOpen = 1<<63 - 1
	start := int32(0)
	if lo > 0 {
		start = c.count[lo-1]
	}
	roots, prev := 0, start
	for _, end := range c.count[lo:hi] {
		if end != prev {
			roots++
		}
		prev = end
	}
	out.extend(roots) // the closed ones are fewer; cut below
	k := 0
	for r := int32(lo); r < int32(hi); r++ {
		end := c.count[r]
		if start == end {
			continue
		}
		members := c.members[start:end]
		start = end
		if c.open[r] {
			p.firstOpen = min(p.firstOpen, c.seq[r])
			continue
		}
		f := summariseMembers(b, members, c.calibrated)
		out.root[k], out.Size[k], out.FirstToA[k], out.LastToA[k] = c.seq[r], f.size, f.first, f.last
		out.ToTSum[k], out.ESum[k], out.X[k], out.Y[k] = f.totSum, f.eSum, f.x, f.y
		out.XMin[k], out.XMax[k], out.YMin[k], out.YMax[k], out.Max[k] = f.xmin, f.xmax, f.ymin, f.ymax, f.max
		k++
		if c.keep {
			for _, j := range members {
				out.Members.AppendFrom(b, int(j))
			}
			out.Start = append(out.Start, out.Members.Len())
		}
	}
	out.truncate(k)
}

// summariseMembers returns the features of the cluster of the given hits.
func summariseMembers(b *Hits, members []int32, calibrated bool) features {
	r := members[0]
	s := newHitSums(b.X[r], b.Y[r], b.ToA[r], b.ToT[r])
	for _, j := range members[1:] {
		s.add(b.X[j], b.Y[j], b.ToA[j], b.ToT[j])
	}
	if !calibrated {
		return s.result()
	}
	e := newEnergySums()
	for _, j := range members {
		e.add(b.X[j], b.Y[j], b.E[j])
	}
	return e.result(&s)
}

// mergeByRoot appends the clusters of a and b, each in root order, to dst
// in root order.
func mergeByRoot(dst, a, b *Clusters) {
	i, j := 0, 0
	for i < a.Len() && j < b.Len() {
		if a.root[i] < b.root[j] {
			k := i
			for k < a.Len() && a.root[k] < b.root[j] {
				k++
			}
			dst.appendRange(a, i, k)
			i = k
		} else {
			k := j
			for k < b.Len() && b.root[k] < a.root[i] {
				k++
			}
			dst.appendRange(b, j, k)
			j = k
		}
	}
	dst.appendRange(a, i, a.Len())
	dst.appendRange(b, j, b.Len())
}
