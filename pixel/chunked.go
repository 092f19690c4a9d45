package pixel

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
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
//  2. The buffer is cut into chunks of about 4096 hits, each border at the
//     widest time gap near its place (a gap wider than dt, common between
//     bursts of hits, makes a quiet border no cluster crosses; a cluster
//     longer than a chunk makes the chunk grow to the next quiet gap, up to
//     four times). Each chunk is clustered on its own
//     (one work item each) with a sensor-sized matrix of last-hit
//     references encoded relative to the chunk start, and a union-find
//     forest over the buffer whose roots are the earliest hits. The
//     matrix is restored afterwards by visiting the chunk's hits. The same
//     work item finishes, while the chunk is in the cache, the clusters
//     that cannot reach past it (no hit within dt of its first or last
//     time): grouped by a counting sort, summarised in root order.
//  3. Border grouping: for each border between chunks that is not quiet,
//     the hits within dt before it are put in a matrix and the hits within
//     dt after it look up their nine pixels; the pairs found are joined.
//  4. The clusters that reached past their chunk are grouped by their
//     final roots; closed ones are summarised, and the hits of those the
//     next buffer can still reach are carried into it. All clusters are
//     sent in order of first ToA (see [LongSpan]).
//
// With a [ChunkLabeler] (an accelerator), step 2 runs there for a
// buffer's new hits while the workers do the rest for the buffer before;
// the hits carried into a buffer, known once the buffer before is
// finished, are chunks of their own on the workers.
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
	offsets [16]int32
	mats    [][]int32 // a pixel matrix per worker, all zero between uses
	occs    [][]byte  // its occupancy bits, small enough for L1

	buf        Hits
	seq        []int64 // arrival numbers
	carried    int     // hits at the front of buf carried from the last buffer
	calibrated bool
	parent     []int32
	border     []bool      // per chunk root: the cluster may reach past its chunk
	bounds     []int       // chunk k is hits [bounds[k], bounds[k+1])
	chunks     []chunkWork // per chunk
	scratch    [][]int32   // per worker: grouping space
	pairs      [][]int32   // per chunk border: pairs of hits to join
	edge       []rootHit   // hits of border clusters with their final roots
	sorted     []rootHit   // edge grouped by root
	rootCount  []int32     // counting-sort space
	carryIdx   []int32
	carry      Hits
	carrySeq   []int64

	// Folding (see foldCarried): the sums carried by the carried hits at
	// the front of buf, and this buffer's new ones by root until they are
	// carried. Carried hits of a folded cluster no longer reach each other
	// in time, so they are joined by links.
	foldMin   int
	folds     []*foldedSums
	nextFolds []*foldedSums
	newFolds  map[int32]*foldedSums
	links     []int32 // pairs of carried hits to join
	carryAt   []int32 // where a carried hit goes in the next buffer

	labeler ChunkLabeler // nil: the chunk step on the workers
	job     ChunkJob
	sumsAt  []int    // per chunk: where its records and open hits start
	err     error    // see Err
	pending Clusters // closed clusters waiting for an earlier open one
	segs    []emitSegment
	noChunk Clusters // no clusters: those of the segment after the last chunk
	small   Clusters // border clusters, then merged with the pending ones
	merged  Clusters

	// The buffer's view of the stream when its new hits were complete:
	// the latest time, and the late hits (a border is quiet only without
	// them). With a labeler the buffer is finished a buffer later.
	bufNow  Time
	bufLate int64
	// With a labeler (see advance), the next buffer's new hits, labelled
	// on the device while the workers finish the buffer before: their
	// chunks, roots and view of the stream, and the arrival number of the
	// first. A labelled buffer waits in buf, after its carried hits
	// (assembled), its first hostChunks chunks those of the carried hits,
	// for the workers to label; labeled and summed say what the labeler
	// did for the others.
	next                Hits
	nextBounds          []int
	nextParent          []int32
	nextNow             Time
	nextLate, nextFirst int64
	assembled           bool
	hostChunks          int
	labeled, summed     bool

	position
	out Clusters  // Add's batch
	dst *Clusters // where the clusters go in the current call
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
	c := &ChunkedClusterer{cfg: cfg, workers: workers, size: bufferHits, chunk: chunkHits, foldMin: chunkHits, stride: cfg.Width + 2, position: startPosition}
	c.offsets = neighbourOffsets(c.stride)
	c.mats, c.occs, c.scratch = make([][]int32, workers), make([][]byte, workers), make([][]int32, workers)
	for w := range c.mats {
		c.mats[w] = make([]int32, c.stride*(cfg.Height+2))
		c.occs[w] = make([]byte, len(c.mats[w])/8+16)
	}
	c.out.Reset()
	c.pending.Reset()
	c.small.Reset()
	c.merged.Reset()
	return c, nil
}

// ChunkLabeler does the chunk step of a [ChunkedClusterer] (algorithm 2)
// for every chunk of a buffer's new hits at once, on an accelerator:
// package pixel/pixelcl is one, on an OpenCL device. The clusterer does
// the rest (the hits carried in, the borders, the features, the order) as
// without it, so the clusters are the same, and does it for the buffer
// before while Label runs, on a goroutine of its own.
type ChunkLabeler interface {
	// Label sets, for every chunk [Bounds[k], Bounds[k+1]) of the job's
	// time-ordered hits and every hit i of it, Parent[i] to the earliest
	// hit of i's cluster within the chunk: each hit in turn joined with
	// the last hit so far of each of its nine pixels (its own and those
	// around it, on a sensor of Config.Width x Config.Height) whose ToA is
	// within Config.Dt of its own, where a hit does not replace a later
	// one as its pixel's last. Asked to, and where it can, it summarises
	// the closed clusters too (see [ChunkJob]).
	Label(job *ChunkJob) error
	// Sizes are the new hits a buffer takes and the hits a chunk takes
	// that suit the labeler (0: the clusterer's).
	Sizes() (buffer, chunk int)
}

// SetLabeler makes l do the chunk step of every buffer (nil: the
// workers), before the first hits. The labeler labels a buffer's new hits
// while the workers finish the buffer before (see advance), so each
// buffer's clusters come a buffer later. A failed Label is reported by
// Err, and that buffer's chunks are clustered on the workers, so that
// nothing is lost.
func (c *ChunkedClusterer) SetLabeler(l ChunkLabeler) {
	if c.stats.Hits > 0 {
		panic("pixel: SetLabeler after the first hits")
	}
	c.labeler = l
	if l == nil {
		return
	}
	buffer, chunk := l.Sizes()
	if buffer > 0 {
		c.size = buffer
	}
	if chunk > 0 {
		c.chunk = chunk
	}
}

// chunkWork is what a chunk's task leaves: its finished clusters and the
// hits of its clusters that may reach past it.
type chunkWork struct {
	out    Clusters
	border []int32
}

// rootHit is a hit of a border cluster with its final root.
type rootHit struct{ root, hit int32 }

// KeepMembers makes the emitted [Clusters] carry the hits of each cluster.
func (c *ChunkedClusterer) KeepMembers(keep bool) { c.keep = keep }

// Add takes time-ordered hits and returns the clusters finished so far,
// valid until the next call.
func (c *ChunkedClusterer) Add(h *Hits) *Clusters {
	c.out.Reset()
	c.AddTo(&c.out, h)
	return &c.out
}

// AddTo is Add appending the finished clusters to dst (a reset batch, or
// one holding earlier clusters of the stream), for a caller that keeps
// them: it saves a copy of every cluster.
func (c *ChunkedClusterer) AddTo(dst *Clusters, h *Hits) {
	c.dst = dst
	c.stats.Hits += int64(h.Len())
	if h.Calibrated() && !c.calibrated {
		c.calibrate()
	}
	// Room for this call's hits up to the buffer's end, at least doubling
	// what the buffer holds: filled in many calls, a buffer of millions of
	// hits is otherwise copied at every growth of a quarter.
	into, held := c.filling()
	if room := min(c.fresh()+held-into.Len(), max(h.Len(), into.Len())); room > 0 {
		into.Reserve(room)
		if into == &c.buf {
			c.seq = slices.Grow(c.seq, room)
		}
	}
	width, height := c.cfg.Width, c.cfg.Height
	for i := 0; i < h.Len(); {
		if int(h.X[i]) >= width || int(h.Y[i]) >= height {
			c.stats.OutOfRange++
			i++
			continue
		}
		// At least a hit: finishing a buffer when energies start can leave
		// the next one's hits beyond the new hits a buffer takes.
		into, held := c.filling()
		j, restart := inSensorRun(h, i, min(h.Len(), i+max(1, c.fresh()+held-into.Len())), &c.cfg, &c.position)
		switch {
		case into == &c.buf:
			for range j - i {
				c.seq = append(c.seq, c.nextSeq)
				c.nextSeq++
			}
		case into.Len() == 0: // the next buffer's arrival numbers follow its indices
			c.nextFirst = c.nextSeq
			fallthrough
		default:
			c.nextSeq += int64(j - i)
		}
		into.AppendRange(h, i, j)
		i = j
		switch {
		case restart: // as at the end of a stream, then afresh
			c.finishAll()
			c.restartClock()
		case into.Len()-held < c.fresh():
		case c.labeler != nil:
			c.advance(false)
		default:
			c.process(false)
		}
	}
	c.stats.Clustered = c.stats.Hits - c.stats.OutOfRange
}

// filling returns where new hits go, after how many held there: the
// buffer after its carried hits, or with a labeler the next buffer.
func (c *ChunkedClusterer) filling() (*Hits, int) {
	if c.labeler != nil {
		return &c.next, 0
	}
	return &c.buf, c.carried
}

// calibrate starts the energies: the hits held get zero. A labelled
// buffer waiting for the workers is finished first, without them, as it
// would have been without a labeler.
func (c *ChunkedClusterer) calibrate() {
	if c.assembled {
		c.finish(false)
	}
	c.calibrated = true
	c.buf.E = append(c.buf.E[:0], make([]float32, c.buf.Len())...)
	c.next.E = append(c.next.E[:0], make([]float32, c.next.Len())...)
}

// fresh is the number of new hits a buffer takes: the set size, or as many
// as were carried into it if more. The carried hits are clustered again
// with every buffer, so when dt spans more hits than a buffer takes, their
// work would be repeated buffer after buffer (quadratic in the hits within
// dt); a buffer taking at least as many new ones at most doubles it.
func (c *ChunkedClusterer) fresh() int { return max(c.size, c.carried) }

// Flush clusters the rest and returns every remaining cluster.
func (c *ChunkedClusterer) Flush() *Clusters {
	c.out.Reset()
	c.FlushTo(&c.out)
	return &c.out
}

// FlushTo is Flush appending the clusters to dst (see AddTo).
func (c *ChunkedClusterer) FlushTo(dst *Clusters) {
	c.dst = dst
	c.finishAll()
}

// finishAll finishes every hit held, as at the end of the stream: nothing
// is carried.
func (c *ChunkedClusterer) finishAll() {
	switch {
	case c.next.Len() > 0:
		c.advance(true)
	case c.assembled:
		c.finish(true)
	default: // without a labeler; with one, nothing or the hits carried
		c.process(true)
	}
}

// process clusters the buffer on the workers; at the end of the stream
// nothing is carried.
func (c *ChunkedClusterer) process(final bool) {
	c.bufNow, c.bufLate = c.now, c.stats.Late
	c.bounds = c.cut(c.buf.ToA, c.bounds)
	c.parent = growLen(c.parent, c.buf.Len())
	c.hostChunks, c.labeled, c.summed = len(c.bounds)-1, false, false
	c.finish(final)
}

// finish clusters the buffer's chunks the labeler did not, joins the
// chunks across their borders and sends the clusters finished. Each
// chunk's task clusters the chunk and finishes at once, while its hits are
// in the cache, every cluster that cannot reach past the chunk: one
// without a hit within dt of the chunk's first or last time. The others
// are joined across the borders and finished here.
func (c *ChunkedClusterer) finish(final bool) {
	chunks := len(c.bounds) - 1
	c.border = growLen(c.border, c.buf.Len())
	c.chunkSpace(chunks)
	c.parallel(chunks, func(w, k int) {
		labeled := c.labeled && k >= c.hostChunks
		if !labeled || !c.summed {
			c.chunkTask(w, k, final, labeled)
		}
	})
	c.parallel(chunks-1, func(w, k int) {
		c.pairs[k] = c.pairs[k][:0]
		if b := c.bounds[k+1]; !c.quiet(c.buf.ToA, b, c.bufLate) {
			c.pairs[k] = c.borderPairs(c.mats[w], b, c.pairs[k])
		}
	})
	for _, p := range c.pairs[:max(0, chunks-1)] {
		c.join(p)
	}
	c.join(c.links)
	c.emit(chunks, c.finishBorders(final, chunks))
	c.assembled = false
}

// chunkSpace makes room for the work of the given number of chunks.
func (c *ChunkedClusterer) chunkSpace(chunks int) {
	for len(c.chunks) < chunks {
		c.chunks = append(c.chunks, chunkWork{})
		c.pairs = append(c.pairs, nil)
	}
}

// cut chooses the chunk borders, about c.chunk hits apart: each at the
// widest time gap among the hits around its place. A gap wider than dt is a
// quiet border that no cluster crosses, so its neighbourhood needs no
// joining; it is common, since clusters arrive as bursts of hits.
//
// A border whose first hit is within dt of the last hit before the border
// before it is dropped, its chunk joined to the next: a border's hits
// within dt then lie in the chunks on either side of it. With a dt
// spanning many chunks, every border would look at the hits of all of
// them, and the work and the pairs found would grow with the square of
// the hits within dt.
func (c *ChunkedClusterer) cut(toa []Time, bounds []int) []int {
	n := len(toa)
	bounds = append(bounds[:0], 0)
	reach := max(1, c.chunk/16)
	for b := c.chunk; b < n; b += c.chunk {
		from, to := max(b-reach, bounds[len(bounds)-1]+1), min(b+reach, n-1)
		if from > to {
			continue // no room for a chunk here
		}
		best, gap := from, Time(-1<<62)
		for j := from; j <= to; j++ {
			if g := toa[j] - toa[j-1]; g > gap {
				best, gap = j, g
			}
		}
		// No quiet gap near: a cluster longer than a chunk (a large ion)
		// is being cut. Look further on for the first quiet gap, letting
		// the chunk grow to at most four times its length.
		for j := to + 1; gap <= c.cfg.Dt && j < min(b+3*c.chunk, n); j++ {
			if g := toa[j] - toa[j-1]; g > c.cfg.Dt {
				best, gap = j, g
			}
		}
		if prev := bounds[len(bounds)-1]; prev > 0 && toa[best]-toa[prev-1] <= c.cfg.Dt {
			continue // within dt of the border before: no border here
		}
		bounds = append(bounds, best)
		b = max(b, best) // the next border is a chunk after this one
	}
	return append(bounds, n)
}

// quiet reports whether no cluster can cross the border before hit b of
// times toa: the hits before it end more than dt before it, in a stream
// that had no late hits when they were complete (with them the order,
// and so the gap, is not to be trusted).
func (c *ChunkedClusterer) quiet(toa []Time, b int, late int64) bool {
	return late == 0 && toa[b]-toa[b-1] > c.cfg.Dt
}

// chunkTask clusters chunk k (unless labeled, by the labeler),
// marks the clusters that may reach past it, or span more than LongSpan
// hits, and summarises the others, in root order.
func (c *ChunkedClusterer) chunkTask(w, k int, final, labeled bool) {
	lo, hi := c.bounds[k], c.bounds[k+1]
	parent, border, toa := c.parent, c.border, c.buf.ToA
	for i := lo; i < hi; i++ {
		border[i] = false
	}
	if !labeled {
		for i := lo; i < hi; i++ {
			parent[i] = int32(i)
		}
		c.clusterChunk(c.mats[w], c.occs[w], lo, hi)
	}
	start, end := c.reach(toa, c.bounds, c.bufLate, k, final, false)
	// The carried hits' clusters are finished with the border ones: they
	// may carry folded sums, and links to join.
	carried := int32(c.carried)
	for i := int32(lo); i < int32(hi); i++ {
		r := find(parent, i)
		parent[i] = r
		if toa[i] <= start || toa[i] >= end || i < carried {
			border[r] = true
		}
	}
	cw := &c.chunks[k]
	cw.border = cw.border[:0]
	// Group the other hits by root: count, prefix, place (counting sort).
	cnt := growLen(c.scratch[w], 2*(hi-lo)+1)
	c.scratch[w] = cnt
	count, members := cnt[:hi-lo+1], cnt[hi-lo+1:]
	clear(count)
	roots := 0
	for i := lo; i < hi; i++ {
		r := parent[i]
		switch {
		case border[r]:
			cw.border = append(cw.border, int32(i))
		case count[int(r)-lo+1] == 0:
			roots++
			fallthrough
		default:
			count[int(r)-lo+1]++
		}
	}
	for j := 1; j <= hi-lo; j++ {
		count[j] += count[j-1]
	}
	for i := lo; i < hi; i++ {
		if r := parent[i]; !border[r] {
			members[count[int(r)-lo]] = int32(i)
			count[int(r)-lo]++
		}
	}
	// count[j] is now the end of the members of root lo+j.
	out := &cw.out
	out.Reset()
	out.Calibrated = c.calibrated
	out.extend(roots)
	b := &c.buf
	m, from := 0, int32(0)
	span := c.cfg.span()
	for _, to := range count[:hi-lo] {
		if to == from {
			continue
		}
		if c.seq[members[to-1]]-c.seq[members[from]] > span { // out of root order: with the border ones
			cw.border = append(cw.border, members[from:to]...)
			from = to
			continue
		}
		c.summariseMembers(out, m, members[from:to], nil)
		if c.keep {
			for _, h := range members[from:to] {
				out.Members.AppendFrom(b, int(h))
			}
			out.Start = append(out.Start, out.Members.Len())
		}
		m++
		from = to
	}
	out.truncate(m)
}

// reach returns the times at or before which, and at or after which, a
// hit of chunk k of bounds (over times toa, with late hits as quiet takes
// them) makes its cluster one that may cross the chunk's borders:
// clusters near a border may cross it, unless it is quiet. The buffer's
// start is a border only when hits are still to be carried in before it
// (head); its end is one until the stream ends: the next buffer may reach
// it.
func (c *ChunkedClusterer) reach(toa []Time, bounds []int, late int64, k int, final, head bool) (start, end Time) {
	lo, hi, dt, last := bounds[k], bounds[k+1], c.cfg.Dt, len(bounds)-2
	start, end = Time(-1<<62), Time(1<<62)
	if k > 0 && !c.quiet(toa, lo, late) || k == 0 && head {
		start = toa[lo] + dt
	}
	if k < last && !c.quiet(toa, hi, late) || k == last && !final {
		end = toa[hi-1] - dt
	}
	return start, end
}

// join joins the hits of each pair.
func (c *ChunkedClusterer) join(pairs []int32) {
	for i := 0; i < len(pairs); i += 2 {
		union(c.parent, pairs[i], pairs[i+1])
	}
}

// finishBorders groups the hits of the clusters that reached past their
// chunk by their final roots, summarises the closed ones into c.small and
// carries the open ones (a hit at most dt before the latest time) into the
// next buffer. It returns the lowest key (see outputKey) an open cluster
// may get: its root's arrival number, or its last hit's once it is long.
func (c *ChunkedClusterer) finishBorders(final bool, chunks int) int64 {
	c.edge = c.edge[:0]
	for k := range chunks {
		for _, i := range c.chunks[k].border {
			c.edge = append(c.edge, rootHit{find(c.parent, i), i})
		}
	}
	c.groupByRoot()
	b := &c.buf
	limit := c.bufNow - c.cfg.Dt
	bound := int64(math.MaxInt64)
	span := c.cfg.span()
	c.small.Reset()
	c.carryIdx = c.carryIdx[:0]
	// Many open clusters too small to be folded each can still hold
	// every hit of a long run (pixels firing within a dt of a second):
	// once the hits carried pass a buffer, every open cluster is folded
	// that can shrink (three hits on a pixel keep two).
	foldMin := c.foldMin
	if c.carried > c.size {
		foldMin = min(foldMin, 3)
	}
	var members []int32
	for g := 0; g < len(c.edge); {
		r := c.edge[g].root
		members = members[:0]
		open := false
		for ; g < len(c.edge) && c.edge[g].root == r; g++ {
			i := c.edge[g].hit
			members = append(members, i)
			open = open || !final && b.ToA[i] >= limit
		}
		if open {
			bound = min(bound, outputKey(c.seq[r], c.lastArrival(members, c.folds), span))
			if !c.keep && len(members) >= foldMin {
				members = c.foldCarried(members)
			}
			c.carryIdx = append(c.carryIdx, members...)
			continue
		}
		k := c.small.Len()
		c.small.extend(k + 1)
		c.small.Calibrated = c.calibrated
		c.summariseMembers(&c.small, k, members, c.folds)
		if c.keep {
			for _, h := range members {
				c.small.Members.AppendFrom(b, int(h))
			}
			c.small.Start = append(c.small.Start, c.small.Members.Len())
		}
	}
	// In root order so far; a long cluster goes by its last hit.
	if !slices.IsSorted(c.small.key) {
		order := make([]int, c.small.Len())
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(i, j int) int { return cmp.Compare(c.small.key[i], c.small.key[j]) })
		c.merged.Reset()
		for _, i := range order {
			c.merged.appendFrom(&c.small, i)
		}
		c.small, c.merged = c.merged, c.small
	}
	return bound
}

// lastArrival returns the latest arrival number of a cluster's hits, given
// its hits in the buffer in arrival order and the sums they carry.
func (c *ChunkedClusterer) lastArrival(members []int32, folds []*foldedSums) int64 {
	last := c.seq[members[len(members)-1]]
	for _, j := range members {
		if int(j) >= len(folds) {
			break
		}
		if f := folds[j]; f != nil {
			last = max(last, f.last)
		}
	}
	return last
}

// foldCarried keeps of the members of an open cluster (in arrival order,
// the root first) only those a later hit can reach, and adds the others to
// sums carried by the root, returning the kept ones. Without this a
// cluster that does not end (a hot pixel firing faster than dt) would be
// carried whole into every buffer: quadratic time, and memory without
// bound. Kept are the root, which orders the output, and the last hit on
// each pixel, which the matrix shows to the next hits: one that reaches an
// earlier hit on a pixel reaches the last one too, as it is no earlier.
// So at most a hit per pixel is carried, however many hits dt spans. The
// sums are exact: the features do not change.
func (c *ChunkedClusterer) foldCarried(members []int32) []int32 {
	b, mat := &c.buf, c.mats[0]
	pixel := func(i int32) int { return (int(b.Y[i])+1)*c.stride + int(b.X[i]) + 1 }
	for _, i := range members { // the last hit on each pixel: ties go to the later
		if p := pixel(i); mat[p] == 0 || b.ToA[mat[p]-1] <= b.ToA[i] {
			mat[p] = i + 1
		}
	}
	r := members[0]
	f := c.carriedSums(r)
	if f == nil {
		f = &foldedSums{e: newEnergySums()}
	}
	kept := members[:0] // in place: behind the loop
	for n, i := range members {
		if g := c.carriedSums(i); g != nil && n > 0 {
			f.merge(g)
			c.folds[i] = nil
		}
		p := pixel(i)
		last := mat[p] == i+1
		if last { // each pixel's entry is cleared by its one last hit
			mat[p] = 0
		}
		if n == 0 || last {
			kept = append(kept, i)
			continue
		}
		var e float32
		if c.calibrated {
			e = b.E[i]
		}
		f.add(b.X[i], b.Y[i], b.ToA[i], b.ToT[i], e, c.seq[i])
	}
	if c.newFolds == nil {
		c.newFolds = make(map[int32]*foldedSums)
	}
	c.newFolds[r] = f
	return kept
}

// carriedSums returns the folded sums carried by hit i of the buffer, or
// nil.
func (c *ChunkedClusterer) carriedSums(i int32) *foldedSums {
	if int(i) < len(c.folds) {
		return c.folds[i]
	}
	return nil
}

// groupByRoot orders the border hits by root, keeping arrival order within
// a root: a counting sort over the buffer's indices, linear even when every
// hit is on a border (clusters of thousands of hits cross every chunk).
// A few border hits among many (a device's buffer of millions) are
// sorted by root and index instead, without a pass over the buffer: a
// root's hits come chunk after chunk, each chunk's in index order.
func (c *ChunkedClusterer) groupByRoot() {
	n := c.buf.Len()
	if len(c.edge) < n/64 {
		slices.SortFunc(c.edge, func(a, b rootHit) int {
			return cmp.Or(cmp.Compare(a.root, b.root), cmp.Compare(a.hit, b.hit))
		})
		return
	}
	cnt := growLen(c.rootCount, n+1)
	c.rootCount = cnt
	clear(cnt)
	for _, e := range c.edge {
		cnt[e.root+1]++
	}
	for i := 1; i <= n; i++ {
		cnt[i] += cnt[i-1]
	}
	c.sorted = growLen(c.sorted, len(c.edge))
	for _, e := range c.edge {
		c.sorted[cnt[e.root]] = e
		cnt[e.root]++
	}
	c.edge, c.sorted = c.sorted, c.edge
}

// emit sends the clusters finished in this buffer, merged in key order
// (see outputKey) with the pending ones, up to the bound an open cluster
// sets, keeps the rest pending, and starts the next buffer with the
// carried hits.
func (c *ChunkedClusterer) emit(chunks int, bound int64) {
	// The border clusters and the pending ones are few; merge them first.
	small := &c.small
	if c.pending.Len() > 0 {
		c.merged.Reset()
		mergeByKey(&c.merged, &c.pending, &c.small)
		small = &c.merged
	}
	c.pending.Reset()
	// The chunks' clusters are in key order, chunk after chunk, and the
	// small ones go between them: chunk k's with the small ones whose keys
	// come before its last (and after the chunk before's), the rest after
	// every chunk. Those from the bound on are held back.
	segs := c.segs[:0]
	fromSmall, heldSmall := 0, lowerKey(small, 0, small.Len(), bound)
	at, hitAt := c.dst.Len(), c.dst.Members.Len()
	for k := range chunks + 1 {
		seg := emitSegment{out: &c.noChunk, at: at, hitAt: hitAt, smallFrom: fromSmall, smallTo: small.Len()}
		if k < chunks {
			out := &c.chunks[k].out
			seg.out = out
			seg.outSent = lowerKey(out, 0, out.Len(), bound)
			if out.Len() > 0 {
				seg.smallTo = lowerKey(small, fromSmall, small.Len(), out.key[out.Len()-1])
			} else {
				seg.smallTo = fromSmall
			}
			at += seg.outSent
			hitAt += out.memberHits(0, seg.outSent)
		}
		seg.smallSent = min(seg.smallTo, max(heldSmall, fromSmall))
		at += seg.smallSent - fromSmall
		hitAt += small.memberHits(fromSmall, seg.smallSent)
		fromSmall = seg.smallTo
		segs = append(segs, seg)
	}
	c.segs = segs
	base := c.dst.Len()
	c.dst.lengthen(at-base, hitAt-c.dst.Members.Len(), c.keep, c.calibrated)
	c.dst.Calibrated = c.calibrated
	// Each segment's clusters are copied to their places in parallel:
	// a buffer of a device holds a million clusters and more.
	firstID := c.nextID - int64(base)
	c.parallel(len(segs), func(_, s int) {
		seg := &segs[s]
		at, hitAt := seg.at, seg.hitAt
		mergeRuns(seg.out, 0, seg.outSent, small, seg.smallFrom, seg.smallSent, func(src *Clusters, i, j int) {
			c.dst.copyAt(at, hitAt, src, i, j)
			for k := at; k < at+j-i; k++ {
				c.dst.ID[k] = firstID + int64(k)
			}
			at, hitAt = at+j-i, hitAt+src.memberHits(i, j)
		})
	})
	c.nextID += int64(c.dst.Len() - base)
	for s := range segs {
		seg := &segs[s]
		mergeRuns(seg.out, seg.outSent, seg.out.Len(), small, seg.smallSent, seg.smallTo, c.pending.appendRange)
	}
	c.stats.Clusters = c.nextID
	// The hits of open clusters, in arrival order, start the next buffer.
	slices.Sort(c.carryIdx)
	b := &c.buf
	c.carry.Reset()
	c.carrySeq = c.carrySeq[:0]
	for _, i := range c.carryIdx {
		c.carry.AppendFrom(b, int(i))
		c.carrySeq = append(c.carrySeq, c.seq[i])
	}
	c.carryFolds()
	calibrated := c.calibrated
	b.Reset()
	b.AppendRange(&c.carry, 0, c.carry.Len())
	if calibrated && !b.Calibrated() {
		b.E = append(b.E[:0], make([]float32, b.Len())...)
	}
	c.seq = append(c.seq[:0], c.carrySeq...)
	c.carried = b.Len()
	// What the clusters hold: the hits carried and held back, and the new
	// ones the next buffer takes beyond its size because of the carried.
	held := c.carried + c.fresh() - c.size + c.pending.Members.Len()
	if c.keep && c.err == nil && held > c.cfg.memberLimit() {
		c.err = c.memberLimitError()
	}
}

// Err returns a [MemberLimitError] once the clusterer, keeping members,
// has held more hits than its Config.MemberLimit, and nil before.
func (c *ChunkedClusterer) Err() error { return c.err }

// Close does nothing: the goroutines of a ChunkedClusterer end within
// each call (see [Stream]).
func (c *ChunkedClusterer) Close() {}

// memberLimitError describes the hits held: carried and held back.
func (c *ChunkedClusterer) memberLimitError() error {
	counts := pixelCounts{}
	for _, h := range []*Hits{c.buf.view(0, c.carried), &c.pending.Members} {
		for i, x := range h.X {
			counts.add(x, h.Y[i])
		}
	}
	return counts.memberLimitError(c.cfg.memberLimit())
}

// carryFolds moves the folded sums of the carried hits to their places in
// the next buffer and links each carried hit to its root: once a cluster
// has folded hits, its carried ones need no longer reach each other in
// time, and the links are cheaper than finding out which do.
func (c *ChunkedClusterer) carryFolds() {
	c.links = c.links[:0]
	c.carryAt = growLen(c.carryAt, c.buf.Len())
	next := c.nextFolds[:0]
	for k, i := range c.carryIdx {
		c.carryAt[i] = int32(k)
		if r := find(c.parent, i); r != i { // the root is carried before
			c.links = append(c.links, c.carryAt[r], int32(k))
		}
		f := c.carriedSums(i)
		if nf := c.newFolds[i]; nf != nil {
			f = nf
		}
		next = append(next, f)
	}
	clear(c.newFolds)
	c.folds, c.nextFolds = next, c.folds
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
	stride, dt, base := int32(c.stride), c.cfg.Dt, int32(lo)-1
	for i := int32(lo); i < int32(hi); i++ {
		p := (int32(by[i])+1)*stride + int32(bx[i]) + 1
		t := toa[i]
		// The occupancy bits say which of the nine pixels hold a hit; most
		// hits find none.
		m := occupied3(occ, uint32(p-stride-1)) | occupied3(occ, uint32(p-1))<<3 | occupied3(occ, uint32(p+stride-1))<<6
		if m == 0 {
			mat[p] = i - base
			occ[p>>3] |= 1 << (p & 7)
			continue
		}
		for ; m != 0; m &= m - 1 {
			r := mat[p+c.offsets[bits.TrailingZeros32(m)&15]]
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
	stride, dt := int32(c.stride), c.cfg.Dt
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
		p := (int32(by[i])+1)*stride + int32(bx[i]) + 1
		if r := mat[p]; r == 0 || toa[base+r] <= toa[i] {
			mat[p] = i - base
		}
	}
	for j := int32(b); j < int32(hi); j++ {
		p := (int32(by[j])+1)*stride + int32(bx[j]) + 1
		for _, o := range c.offsets[:aroundPixels] {
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

// summariseMembers stores the features of the cluster of the given hits of
// the buffer, in arrival order, as cluster k of out; folds[j], where not
// nil, are sums folded out of the cluster carried by hit j.
func (c *ChunkedClusterer) summariseMembers(out *Clusters, k int, members []int32, folds []*foldedSums) {
	b, calibrated := &c.buf, c.calibrated
	var s hitSums
	r := members[0]
	s.start(b.X[r], b.Y[r], b.ToA[r], b.ToT[r])
	for _, j := range members[1:] {
		s.countAt(b.ToA[j])
		s.addPixel(b.X[j], b.Y[j], b.ToT[j])
	}
	e := newEnergySums()
	if calibrated {
		for _, j := range members {
			e.add(b.X[j], b.Y[j], b.E[j])
		}
	}
	for _, j := range members {
		if int(j) >= len(folds) {
			break
		}
		if f := folds[j]; f != nil {
			s.merge(&f.s)
			e.merge(&f.e)
		}
	}
	root := c.seq[r]
	key := outputKey(root, c.lastArrival(members, folds), c.cfg.span())
	if !calibrated {
		out.store(k, root, key, &s, nil)
		return
	}
	out.store(k, root, key, &s, &e)
}

// mergeByKey appends the clusters of a and b, each in key order, to dst in
// key order.
func mergeByKey(dst, a, b *Clusters) {
	mergeRuns(a, 0, a.Len(), b, 0, b.Len(), dst.appendRange)
}

// mergeRuns passes to put the runs of clusters [i, iEnd) of a and
// [j, jEnd) of b, each in key order, in key order.
func mergeRuns(a *Clusters, i, iEnd int, b *Clusters, j, jEnd int, put func(src *Clusters, i, j int)) {
	for i < iEnd && j < jEnd {
		if a.key[i] < b.key[j] {
			k := i
			for k < iEnd && a.key[k] < b.key[j] {
				k++
			}
			put(a, i, k)
			i = k
		} else {
			k := j
			for k < jEnd && b.key[k] < a.key[i] {
				k++
			}
			put(b, j, k)
			j = k
		}
	}
	if i < iEnd {
		put(a, i, iEnd)
	}
	if j < jEnd {
		put(b, j, jEnd)
	}
}

// lowerKey returns the first of clusters [i, j) of c, in key order, whose
// key is key or more (j if none).
func lowerKey(c *Clusters, i, j int, key int64) int {
	k, _ := slices.BinarySearch(c.key[i:j], key)
	return i + k
}

// emitSegment is a part of a buffer's clusters as emit sends them: a
// chunk's clusters (out, none after the last chunk) and the small ones
// [smallFrom, smallTo) merged with them. Those below the bound, the first
// outSent of out and the small ones up to smallSent, go to the batch from
// its cluster at and member hit hitAt on; the others are held back.
type emitSegment struct {
	out                                    *Clusters
	outSent, smallFrom, smallSent, smallTo int
	at, hitAt                              int
}
