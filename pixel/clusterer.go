package pixel

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// dead marks a buffered hit whose cluster has been emitted.
const dead = -1

// emitEvery is how many hits pass between two looks for finished clusters.
const emitEvery = 256

// Stats counts what a clusterer has seen.
//
// Restarts counts hits more than Config.Restart earlier than the latest:
// the clock was reset (a new acquisition, the next file of another run) or
// the latest time was bogus. Everything buffered is finished as at the end
// of a stream, and the stream goes on from the hit as if it were the
// first. Without this, the clusters open at the latest time would wait
// until the new clock caught up, holding up every cluster after them in
// memory.
type Stats struct {
	Hits       int64 // hits given to Add
	Clustered  int64 // hits that went into clusters
	OutOfRange int64 // hits outside the sensor, not clustered
	Late       int64 // hits earlier than a hit already clustered
	Restarts   int64 // clock resets (see above)
	Clusters   int64 // clusters emitted
}

// node is a buffered hit with its union-find state. The state of a hit
// lives in one array of nodes rather than in columns: the hot loop then
// keeps one slice in registers instead of nine, and one bounds check covers
// every field of a hit.
type node struct {
	toa    Time
	parent int32 // union-find parent; dead once emitted
	next   int32 // next member of the same cluster, or -1
	tail   int32 // at a root: last member of the list
	latest int32 // at a root: the cluster's latest hit
	x, y   uint16
	tot    uint16
	owner  bool // the last hit on its pixel: the matrix points to it
	folded bool // carries the sums of hits folded out of the buffer (see fold)
}

// Clusterer is the sequential streaming clusterer (the paper's algorithm 1):
// a matrix with the last hit of every pixel and a union-find forest over the
// buffered hits whose root is the cluster's earliest hit. It is not safe
// for concurrent use.
type Clusterer struct {
	cfg         Config
	keepMembers bool
	keepOpen    bool // the open clusters' hits stay whole (see Checkpoint)
	calibrated  bool // the buffer carries energies (sticky once seen)

	stride  int       // padded matrix row length, Width+2
	offsets [16]int32 // the nine pixels around a hit (see neighbourOffsets)
	ref     []int32   // buffer index of each pixel's last hit, valid where occ is set
	occ     []byte    // one bit per pixel: it has a buffered hit (small enough for L1)

	// The buffer: hits not yet emitted.
	nodes []node
	seq   []int64   // arrival number of each buffered hit in the whole stream
	e     []float32 // energies, parallel to nodes once calibrated
	front int       // hits before front are all dead
	scan  int       // where emission goes on: the roots before are emitted or skipped
	dead  int       // hits emitted and not yet compacted away
	// Long clusters the emission has passed, in root order (see emitAt);
	// the lowest key they may get and the lowest of those closed, as of
	// the arrival number skippedAt (see refreshSkipped).
	skipped      []skippedCluster
	skippedBound int64
	skippedDue   int64
	skippedAt    int64
	due          []skippedCluster // emitSkipped's scratch
	remap        []int32          // compaction scratch
	order        []int32          // emission scratch

	energies energySums // the energy sums of the cluster being emitted

	group groupScratch    // see clusterGroup
	pend  pendingClusters // see clusterIsolated

	compactAt  int                   // compact once this many emitted hits are in the buffer
	foldAt     int                   // fold once this many hits are buffered (see fold)
	afterFold  int                   // hits left by the last fold
	folds      map[int64]*foldedSums // by arrival number of the hit carrying them
	matrixOnly bool                  // no isolated groups (see isolated.go): tests compare the two
	err        error                 // see Err

	out Clusters
	position
}

// position is where a streaming clusterer stands in its stream, the same
// for every mode.
type position struct {
	now     Time  // latest time seen
	nextSeq int64 // arrival number of the next hit
	nextID  int64 // id of the next cluster
	stats   Stats
}

// startPosition is the position before the first hit.
var startPosition = position{now: -1 << 63}

// Stats returns the counts so far.
func (p *position) Stats() Stats { return p.stats }

// restartClock counts a restart (everything buffered has been finished)
// and forgets the latest time, so that the next hit is on time.
func (p *position) restartClock() {
	p.now = startPosition.now
	p.stats.Restarts++
}

// appendNumbered appends clusters [i, j) of src to out with the next ids.
func (p *position) appendNumbered(out, src *Clusters, i, j int) {
	n := out.Len()
	out.appendRange(src, i, j)
	for k := n; k < out.Len(); k++ {
		out.ID[k] = p.nextID
		p.nextID++
	}
}

// NewClusterer returns a clusterer for cfg.
func NewClusterer(cfg Config) (*Clusterer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Clusterer{cfg: cfg, stride: cfg.Width + 2, position: startPosition, compactAt: 1 << 16, foldAt: foldMin,
		skippedBound: math.MaxInt64, skippedDue: math.MaxInt64}
	c.ref = make([]int32, c.stride*(cfg.Height+2))
	c.occ = make([]byte, len(c.ref)/8+16)
	c.offsets = neighbourOffsets(c.stride)
	c.out.Reset()
	return c, nil
}

// KeepMembers makes the emitted [Clusters] carry the hits of each cluster.
func (c *Clusterer) KeepMembers(keep bool) { c.keepMembers = keep }

// KeepOpenHits keeps the hits of every open cluster in the buffer, as
// KeepMembers does, without giving the clusters their members: what a
// Checkpoint needs. Memory then grows with the clusters that stay open,
// bounded by Config.MemberLimit as with the members.
func (c *Clusterer) KeepOpenHits(keep bool) { c.keepOpen = keep }

// Err returns a [MemberLimitError] once the clusterer, keeping members,
// has held more hits than its Config.MemberLimit, and nil before.
func (c *Clusterer) Err() error { return c.err }

// Close does nothing: a Clusterer runs no goroutine (see [Stream]).
func (c *Clusterer) Close() {}

// memberLimitError describes the hits held.
func (c *Clusterer) memberLimitError() error {
	counts := pixelCounts{}
	for _, nd := range c.nodes[c.front:] {
		if nd.parent != dead {
			counts.add(nd.x, nd.y)
		}
	}
	return counts.memberLimitError(c.cfg.memberLimit())
}

// Add clusters a batch of hits, which should be in time order (and follow
// the previous batch in time), and returns the clusters that are finished.
// The returned batch is valid until the next call.
//
// Hits outside the sensor are counted in Stats.OutOfRange and skipped. A hit
// earlier than one already clustered is counted in Stats.Late and clustered
// with the clusters still buffered, comparing absolute time differences; it
// never overwrites a later hit in the pixel matrix, and its cluster keeps
// its place in the output order as if it had arrived on time at the moment
// it did arrive.
func (c *Clusterer) Add(h *Hits) *Clusters {
	c.out.Reset()
	c.AddTo(&c.out, h)
	return &c.out
}

// AddTo is Add appending the finished clusters to out (a reset batch, or
// one holding earlier clusters of the stream), for a caller that keeps
// them: it saves a copy of every cluster.
func (c *Clusterer) AddTo(out *Clusters, h *Hits) {
	c.stats.Hits += int64(h.Len())
	if h.Calibrated() && !c.calibrated {
		c.calibrated = true
		c.e = append(c.e[:0], make([]float32, len(c.nodes))...)
	}
	// Room for a cluster per hit of h, which the isolated groups rely on;
	// the emission of buffered clusters makes its own (see emitCluster).
	// The columns are cut to what was written at the end.
	k := out.Len()
	out.extend(k + h.Len())
	out.Calibrated = c.calibrated
	for i := 0; i < h.Len(); {
		if h.ToA[i]-c.cfg.Dt > c.now && !c.matrixOnly {
			if c.front < len(c.nodes) { // all closed: hit i is more than dt after them
				k = c.emitAt(out, k, emitAll)
			}
			var j int
			if k, j = c.clusterIsolated(out, k, h, i); j > i {
				i = j
				continue
			}
		}
		// Emitting often clears the occupancy of finished clusters, so that
		// most new hits find an empty neighbourhood (the fast path).
		j, ordered := nextGap(h, i, min(h.Len(), i+emitEvery), c.cfg.Dt)
		r := j
		if !ordered || h.ToA[i] < c.now { // late hits: one may restart the stream
			r = c.restartIn(h, i, j)
		}
		c.addRange(h, i, r)
		if r < j {
			k = c.emitAt(out, k, emitAll)
			c.restartClock()
		} else {
			k = c.emitAt(out, k, emitClosed)
		}
		i = r
	}
	out.truncate(k)
	c.stats.Clusters = c.nextID
	c.stats.Clustered = c.stats.Hits - c.stats.OutOfRange
}

// Flush emits every buffered cluster; call it at the end of the stream.
func (c *Clusterer) Flush() *Clusters {
	c.out.Reset()
	c.FlushTo(&c.out)
	return &c.out
}

// FlushTo is Flush appending the clusters to out (see AddTo).
func (c *Clusterer) FlushTo(out *Clusters) { c.emit(out, emitAll) }

// restartIn returns the index of the first hit of h in [i, j) inside the
// sensor that restarts the stream (see [Stats.Restarts]), or j.
func (c *Clusterer) restartIn(h *Hits, i, j int) int {
	width, height := uint16(c.cfg.Width-1), uint16(c.cfg.Height-1)
	now, gap := c.now, c.cfg.RestartGap()
	for ; i < j; i++ {
		if h.X[i] > width || h.Y[i] > height {
			continue
		}
		t := h.ToA[i]
		if clockReset(now, t, gap) {
			return i
		}
		now = max(now, t)
	}
	return j
}

// clockReset reports whether a hit at t, after one at latest, restarts the
// stream: it is more than gap earlier. The difference is taken in uint64,
// where it is exact even when it overflows int64.
func clockReset(latest, t, gap Time) bool { return t < latest && uint64(latest-t) > uint64(gap) }

// addRange clusters hits [from, to) of h: they are copied into the buffer
// first, then joined to the clusters around them. Two loops rather than one
// because each then keeps its few slices in registers.
func (c *Clusterer) addRange(h *Hits, from, to int) {
	n0 := len(c.nodes)
	c.nodes = growLen(c.nodes, n0+to-from)
	c.seq = growLen(c.seq, len(c.nodes))
	if c.calibrated {
		c.e = growLen(c.e, len(c.nodes))
	}
	n := c.copyHits(h, from, to, n0)
	c.nodes, c.seq = c.nodes[:n], c.seq[:n]
	if c.calibrated {
		c.e = c.e[:n]
	}
	c.join(n0)
}

// copyHits appends hits [from, to) of h to the buffer at index i as
// clusters of their own, skipping (and counting) those outside the sensor,
// and returns the new buffer length.
func (c *Clusterer) copyHits(h *Hits, from, to, i int) int {
	nodes, seq := c.nodes, c.seq
	xs, ys, ts, tots := h.X[from:to], h.Y[from:to], h.ToA[from:to], h.ToT[from:to]
	ys, ts, tots = ys[:len(xs)], ts[:len(xs)], tots[:len(xs)]
	width, height := uint16(c.cfg.Width-1), uint16(c.cfg.Height-1)
	arrival := c.nextSeq
	energies := c.e
	for k, x := range xs {
		y := ys[k]
		if x > width || y > height {
			c.stats.OutOfRange++
			continue
		}
		nd := &nodes[i]
		nd.toa, nd.x, nd.y, nd.tot = ts[k], x, y, tots[k]
		j := int32(i)
		nd.parent, nd.next, nd.tail, nd.latest, nd.owner, nd.folded = j, -1, j, j, false, false
		seq[i] = arrival
		arrival++
		if c.calibrated {
			var e float32
			if h.Calibrated() {
				e = h.E[from+k]
			}
			energies[i] = e
		}
		i++
	}
	c.nextSeq = arrival
	return i
}

// join is the paper's algorithm 1 for the buffered hits from index i on:
// each joins the clusters of the hits on its nine pixels (its own
// included) that the definition's time condition allows.
func (c *Clusterer) join(i int) {
	nodes, ref, occ := c.nodes, c.ref, c.occ
	offsets := &c.offsets // bit q of a neighbour mask is the pixel at p+offsets[q]
	stride := uint32(c.stride)
	dt := c.cfg.Dt
	local, window := c.cfg.Definition == Local, c.cfg.Definition == Window
	now := c.now
	for ; i < len(nodes); i++ {
		hit := int32(i)
		t := nodes[i].toa
		late := t < now
		if late {
			c.stats.Late++
		} else {
			now = t
		}
		p := (uint32(nodes[i].y)+1)*stride + uint32(nodes[i].x) + 1
		// Which of the nine pixels hold a hit, from the occupancy bits
		// (which fit in L1) rather than the matrix. Usually none: the
		// first hit of a cluster.
		around := occupied3(occ, p-stride-1) | occupied3(occ, p-1)<<3 | occupied3(occ, p+stride-1)<<6
		if around == 0 {
			ref[p] = hit
			occ[p>>3] |= 1 << (p & 7)
			nodes[i].owner = true
			continue
		}
		mine := around&(1<<4) != 0 // the hit's own pixel has one
		root := int32(-1)
		for ; around != 0; around &= around - 1 {
			j := ref[int32(p)+offsets[bits.TrailingZeros32(around)&15]]
			if nodes[j].parent == root { // already joined (tracks: most)
				continue
			}
			var r int32
			if local { // the neighbour itself must be within dt
				if !within(nodes[j].toa, t, dt) {
					continue
				}
				r = findNode(nodes, j)
			} else { // the cluster's latest (global) or first (window) hit
				r = findNode(nodes, j)
				open := nodes[nodes[r].latest].toa
				if window {
					open = nodes[r].toa
				}
				if !within(open, t, dt) {
					continue
				}
			}
			switch {
			case root < 0:
				root = r
			case r != root:
				root = unionNodes(nodes, root, r)
			}
		}
		if root >= 0 {
			nr := &nodes[root]
			nodes[nr.tail].next = hit
			nr.tail = hit
			if t >= nodes[nr.latest].toa {
				nr.latest = hit
			}
			nodes[i].parent = root
		}
		// The matrix keeps the later hit when a late one arrives.
		if !mine {
			ref[p] = hit
			occ[p>>3] |= 1 << (p & 7)
			nodes[i].owner = true
		} else if prev := &nodes[ref[p]]; !late || prev.toa <= t {
			prev.owner = false
			ref[p] = hit
			nodes[i].owner = true
		}
	}
	c.now = now
}

// aroundPixels is the number of pixels around a pixel, itself included.
const aroundPixels = 9

// neighbourOffsets returns the offsets of the nine pixels around a pixel
// (itself included) in a padded matrix with rows of stride, row by row:
// bit q of a neighbour mask stands for offset q. The table is padded to
// 16 entries, so that an index masked by 15 needs no bounds check.
func neighbourOffsets(stride int) [16]int32 {
	var o [16]int32
	k := 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			o[k] = int32(dy*stride + dx)
			k++
		}
	}
	return o
}

// within reports whether a and b are at most dt apart; dt is at most
// 2^62 and hit times are far from the ends of the range, so nothing
// overflows.
func within(a, b, dt Time) bool { return uint64(b-a+dt) <= uint64(2*dt) }

// occupied3 returns the occupancy bits of pixels q, q+1 and q+2.
func occupied3(occ []byte, q uint32) uint32 {
	w := q >> 3
	return (uint32(occ[w]) | uint32(occ[w+1])<<8) >> (q & 7) & 7
}

// find returns the root of j, halving the path on the way.
func find(parent []int32, j int32) int32 {
	for parent[j] != j {
		parent[j] = parent[parent[j]]
		j = parent[j]
	}
	return j
}

// findNode is find over the parents of nodes.
func findNode(nodes []node, j int32) int32 {
	// The two commonest steps without a branch (see findIn).
	if r := nodes[nodes[j].parent].parent; nodes[r].parent == r {
		nodes[j].parent = r
		return r
	}
	for {
		p := nodes[j].parent
		if p == j {
			return j
		}
		gp := nodes[p].parent
		nodes[j].parent = gp
		j = gp
	}
}

// growLen is s with length n, its contents kept; new storage, twice n,
// when s has too little.
func growLen[T any](s []T, n int) []T {
	if cap(s) < n {
		ns := make([]T, n, 2*n)
		copy(ns, s)
		return ns
	}
	return s[:n]
}

// unionNodes puts the clusters rooted at a and b under the earlier root,
// concatenating their lists, and returns that root.
func unionNodes(nodes []node, a, b int32) int32 {
	a, b = min(a, b), max(a, b)
	na, nb := &nodes[a], &nodes[b]
	nb.parent = a
	nodes[na.tail].next = b
	na.tail = nb.tail
	if nodes[nb.latest].toa > nodes[na.latest].toa {
		na.latest = nb.latest
	}
	return a
}

// emitMode says which clusters emit writes out.
type emitMode uint8

const (
	emitClosed    emitMode = iota // closed clusters up to the first open one
	emitAll                       // every cluster: the end of the stream
	emitAllClosed                 // every closed cluster; the clusterer is reset after
)

// emit writes out clusters in output order while they are closed (all of
// them when flushing) and compacts the buffer when it pays off.
func (c *Clusterer) emit(out *Clusters, mode emitMode) {
	k := out.Len()
	out.Calibrated = c.calibrated
	out.truncate(c.emitAt(out, k, mode))
	c.stats.Clusters = c.nextID
}

// emitAt is emit writing the clusters from index k of out's columns, which
// have room for them, and returning the index after the last one.
//
// Clusters go out in the order of their keys (see outputKey): the roots in
// buffer order, with the long clusters set aside when the scan passes them
// (c.skipped) and merged in by their last hits once they are closed. An
// open cluster holds back every key above the lowest it may still get.
func (c *Clusterer) emitAt(out *Clusters, k int, mode emitMode) int {
	nodes := c.nodes
	n := int32(len(nodes))
	limit := c.now - c.cfg.Dt
	span := c.cfg.span()
	old := c.nextSeq - 1 - span // a root before this may span more than span hits
	var s hitSums
	// The lowest key a skipped open cluster may get. Refreshed at most
	// once per skipped cluster's worth of hits while the stream goes on:
	// many clusters that never end (pixels firing within a dt of a
	// second) made every emission look at them all, every 256 hits.
	// Meanwhile the bound can only be too low, holding clusters back a
	// little longer.
	bound, refreshed := int64(math.MaxInt64), false
	if len(c.skipped) > 0 {
		if mode != emitClosed || c.nextSeq-c.skippedAt >= int64(len(c.skipped)) {
			c.refreshSkipped(mode, limit, span)
			refreshed = true
		}
		bound = c.skippedBound
	}
	i := int32(c.scan)
	for ; i < n; i++ {
		nd := &nodes[i]
		if nd.parent != i { // emitted, or a member of an earlier cluster
			continue
		}
		open := mode != emitAll && c.openTime(i) >= limit
		key := c.seq[i]
		if key < old {
			if open {
				if last := c.seq[nd.latest]; last-key > span { // long already
					c.skipped = append(c.skipped, skippedCluster{i, -1})
					bound = min(bound, last)
					continue
				}
			} else if key = c.keyOf(i, span); key != c.seq[i] {
				c.skipped = append(c.skipped, skippedCluster{i, key})
				c.skippedDue = min(c.skippedDue, key)
				continue
			}
		}
		if open {
			if mode == emitAllClosed {
				continue
			}
			break
		}
		if len(c.skipped) > 0 {
			below := key
			if mode != emitAllClosed {
				below = min(key, bound)
			}
			if k = c.emitSkipped(out, k, below, &s); key > bound && mode != emitAllClosed {
				break
			}
		}
		c.emitCluster(out, k, i, key, &s)
		k++
	}
	if len(c.skipped) > 0 {
		below := int64(math.MaxInt64)
		switch {
		case mode == emitAllClosed:
		case i < n:
			below = min(c.seq[i], bound)
		default:
			below = bound
		}
		k = c.emitSkipped(out, k, below, &s)
	}
	c.skippedBound = bound
	if mode == emitAllClosed {
		return k
	}
	c.scan, c.front = int(i), int(i)
	if len(c.skipped) > 0 {
		c.front = int(c.skipped[0].root)
	}
	live := int(n) - c.dead
	if (c.keepMembers || c.keepOpen) && c.err == nil && live > c.cfg.memberLimit() {
		c.err = c.memberLimitError()
	}
	compact := c.dead == int(n) || c.dead >= c.compactAt && 2*c.dead >= int(n)
	fold := !compact && !c.keepMembers && !c.keepOpen && live >= c.foldAt && live >= 2*c.afterFold
	if (compact || fold) && !refreshed {
		// Compaction moves the skipped roots: none may be a hit that has
		// joined another cluster since, and been emitted or folded with
		// it. Only those go: a refresh here would change when the next
		// ones come, and so what a late hit finds still buffered,
		// depending on whether the buffer folds (members not kept).
		c.dropJoinedSkipped()
	}
	switch {
	case compact:
		c.compact()
	case fold:
		c.fold()
		c.compact()
		// What could not be folded (small clusters waiting behind a long
		// one) is not folded again until the buffer has doubled: the
		// passes then cost a constant time per hit.
		c.afterFold = len(c.nodes)
	}
	return k
}

// emitCluster writes the cluster rooted at r, with the given key, as
// cluster k of out, making room when the columns are full. Room for
// every buffered cluster at once would be too much when they are many
// (those held back by a long cluster) and the batches are kept (the
// lanes' segments).
func (c *Clusterer) emitCluster(out *Clusters, k int, r int32, key int64, s *hitSums) {
	if k == len(out.ID) {
		out.extend(2*k + 16)
	}
	if c.keepMembers {
		c.appendMembers(out, r)
	}
	out.ID[k] = c.nextID
	var e *energySums
	if c.calibrated {
		sums := c.energySums(r)
		e = &sums
	}
	c.summarise(r, s)
	out.store(k, c.seq[r], key, s, e)
	c.nextID++
}

// skippedCluster is a long cluster the emission has passed: its key is its
// last hit's arrival number, known once it is closed (-1 before).
type skippedCluster struct {
	root int32
	key  int64
}

// refreshSkipped drops the skipped clusters merged into earlier ones and
// sets the keys of those now closed. It sets c.skippedBound to the lowest
// key the open ones may still get (each its latest hit's arrival number,
// or more) and c.skippedDue to the lowest key of the closed ones.
func (c *Clusterer) refreshSkipped(mode emitMode, limit Time, span int64) {
	bound, due := int64(math.MaxInt64), int64(math.MaxInt64)
	kept := c.skipped[:0]
	for _, sk := range c.skipped {
		r := sk.root
		if c.nodes[r].parent != r {
			continue
		}
		if sk.key < 0 {
			if mode != emitAll && c.openTime(r) >= limit {
				bound = min(bound, c.seq[c.nodes[r].latest])
			} else {
				sk.key = c.keyOf(r, span)
			}
		}
		if sk.key >= 0 {
			due = min(due, sk.key)
		}
		kept = append(kept, sk)
	}
	c.skipped = kept
	c.skippedBound, c.skippedDue, c.skippedAt = bound, due, c.nextSeq
}

// dropJoinedSkipped drops the skipped clusters merged into earlier ones,
// leaving the bounds of the others as they are.
func (c *Clusterer) dropJoinedSkipped() {
	kept := c.skipped[:0]
	for _, sk := range c.skipped {
		if c.nodes[sk.root].parent == sk.root {
			kept = append(kept, sk)
		}
	}
	c.skipped = kept
}

// emitSkipped writes the closed skipped clusters with keys below the given
// one, in key order, from cluster k of out on, and returns the index after
// the last.
func (c *Clusterer) emitSkipped(out *Clusters, k int, below int64, s *hitSums) int {
	if below <= c.skippedDue {
		return k
	}
	due, kept := c.due[:0], c.skipped[:0]
	c.skippedDue = math.MaxInt64
	for _, sk := range c.skipped {
		switch {
		case c.nodes[sk.root].parent != sk.root: // joined another since the refresh
		case sk.key >= 0 && sk.key < below:
			due = append(due, sk)
		default:
			if sk.key >= 0 {
				c.skippedDue = min(c.skippedDue, sk.key)
			}
			kept = append(kept, sk)
		}
	}
	c.skipped = kept
	slices.SortFunc(due, func(a, b skippedCluster) int { return cmp.Compare(a.key, b.key) })
	for _, sk := range due {
		c.emitCluster(out, k, sk.root, sk.key, s)
		k++
	}
	c.due = due
	return k
}

// keyOf returns the output key of the closed cluster rooted at r.
func (c *Clusterer) keyOf(r int32, span int64) int64 {
	nodes := c.nodes
	last := c.seq[r]
	for j := r; j >= 0; j = nodes[j].next {
		last = max(last, c.seq[j])
		if nodes[j].folded {
			last = max(last, c.folds[c.seq[j]].last)
		}
	}
	return outputKey(c.seq[r], last, span)
}

// summarise sets s to the sums of the cluster rooted at r and marks its
// hits dead, clearing the occupancy of the pixels they own. The matrix
// itself is not touched: it is read only where a pixel is occupied.
func (c *Clusterer) summarise(r int32, s *hitSums) {
	nodes, occ, stride := c.nodes, c.occ, uint32(c.stride)
	nr := &nodes[r]
	s.start(nr.x, nr.y, nr.toa, nr.tot)
	killed := 0
	for j := r; j >= 0; {
		nd := &nodes[j]
		if j != r {
			s.countAt(nd.toa)
			s.addPixel(nd.x, nd.y, nd.tot)
		}
		if nd.folded {
			s.merge(&c.folds[c.seq[j]].s)
			delete(c.folds, c.seq[j])
			nd.folded = false
		}
		nd.parent = dead
		if nd.owner {
			p := (uint32(nd.y)+1)*stride + uint32(nd.x) + 1
			occ[p>>3] &^= 1 << (p & 7)
		}
		j = nd.next
		killed++
	}
	c.dead += killed
}

// energySums returns the energy sums of the cluster rooted at r.
func (c *Clusterer) energySums(r int32) energySums {
	nodes, energies := c.nodes, c.e
	e := newEnergySums()
	for j := r; j >= 0; j = nodes[j].next {
		e.add(nodes[j].x, nodes[j].y, energies[j])
		if nodes[j].folded {
			e.merge(&c.folds[c.seq[j]].e)
		}
	}
	return e
}

// appendMembers adds the hits of the cluster rooted at r to the output in
// time order (ties by arrival).
func (c *Clusterer) appendMembers(out *Clusters, r int32) {
	nodes := c.nodes
	c.order = c.order[:0]
	for j := r; j >= 0; j = nodes[j].next {
		c.order = append(c.order, j)
	}
	slices.SortFunc(c.order, func(u, v int32) int {
		return cmp.Or(cmp.Compare(nodes[u].toa, nodes[v].toa), cmp.Compare(u, v))
	})
	m := &out.Members
	for _, j := range c.order {
		nd := &nodes[j]
		m.Append(nd.x, nd.y, nd.toa, nd.tot)
		if c.calibrated {
			m.E = append(m.E, c.e[j])
		}
	}
	out.Start = append(out.Start, m.Len())
}

// compact drops the dead hits, all of those before the front and the ones
// after it, renumbering the survivors from 0 and every
// reference to them.
func (c *Clusterer) compact() {
	nodes := c.nodes
	n, front := len(nodes), c.front
	c.remap = growLen(c.remap, n-front)
	remap := c.remap
	stride := c.stride
	k := int32(0)
	for j := front; j < n; j++ {
		nd := nodes[j]
		if nd.parent == dead {
			continue
		}
		remap[j-front] = k
		if nd.owner {
			c.ref[(int(nd.y)+1)*stride+int(nd.x)+1] = k
		}
		if nd.parent != int32(j) { // not read at a non-root; keep it a valid index
			nd.tail, nd.latest = int32(j), int32(j)
		}
		nodes[k] = nd
		c.seq[k] = c.seq[j]
		if c.calibrated {
			c.e[k] = c.e[j]
		}
		k++
	}
	at := func(old int32) int32 { return remap[int(old)-front] }
	for j := range nodes[:k] {
		nd := &nodes[j]
		nd.parent, nd.tail, nd.latest = at(nd.parent), at(nd.tail), at(nd.latest)
		if nd.next >= 0 {
			nd.next = at(nd.next)
		}
	}
	for j := range c.skipped {
		c.skipped[j].root = at(c.skipped[j].root)
	}
	// The scan stands at a live root or at the end.
	if c.scan < n {
		c.scan = int(at(int32(c.scan)))
	} else {
		c.scan = int(k)
	}
	c.nodes, c.seq = nodes[:k], c.seq[:k]
	if c.calibrated {
		c.e = c.e[:k]
	}
	c.front, c.dead = 0, 0
}

// restart empties the clusterer for a new stream whose first hit has
// arrival number first. The occupancy is cleared by visiting the buffered
// hits, as cheap as the hits are few.
func (c *Clusterer) restart(first int64) {
	for _, nd := range c.nodes {
		p := (int(nd.y)+1)*c.stride + int(nd.x) + 1
		c.occ[p>>3] &^= 1 << (p & 7)
	}
	c.nodes, c.seq = c.nodes[:0], c.seq[:0]
	c.calibrated, c.e = false, c.e[:0]
	c.front, c.scan, c.dead, c.afterFold = 0, 0, 0, 0
	c.skipped = c.skipped[:0]
	c.skippedBound, c.skippedDue, c.skippedAt = math.MaxInt64, math.MaxInt64, 0
	c.err = nil
	clear(c.folds)
	c.position = startPosition
	c.nextSeq = first
	c.out.Reset()
}

// openTime is the time of the cluster rooted at r that decides whether it
// can still take hits: it can while this is within dt of the present. It
// is the cluster's first hit under the window definition, its latest
// otherwise.
func (c *Clusterer) openTime(r int32) Time {
	if c.cfg.Definition == Window {
		return c.nodes[r].toa
	}
	return c.nodes[c.nodes[r].latest].toa
}

// openBefore reports whether a cluster that later hits can still join (as
// in openState) holds a hit with an arrival number below base, which its
// open state would then list. The buffer is in arrival order, so only the
// hits before base are looked at, and a long open cluster is found at the
// front.
func (c *Clusterer) openBefore(base int64) bool {
	nodes := c.nodes
	limit := c.now - c.cfg.Dt
	for i := int32(c.front); i < int32(len(nodes)) && c.seq[i] < base; i++ {
		if nodes[i].parent != dead && c.openTime(findNode(nodes, i)) >= limit {
			return true
		}
	}
	return false
}

// openState appends to dst a description of the clusters that later hits
// can still join: for each, in root order, its size and the arrival
// numbers of its hits in list order. Two clusterers at the same point of a
// time-ordered stream with equal open states cluster the rest of it
// identically. An open cluster with folded hits has no such description
// (the hits are gone), and ok is false.
func (c *Clusterer) openState(dst []int64) (state []int64, ok bool) {
	nodes := c.nodes
	limit := c.now - c.cfg.Dt
	for i := int32(c.front); i < int32(len(nodes)); i++ {
		if nodes[i].parent != i || c.openTime(i) < limit {
			continue
		}
		at := len(dst)
		dst = append(dst, 0)
		for j := i; j >= 0; j = nodes[j].next {
			if nodes[j].folded {
				return dst, false
			}
			dst = append(dst, c.seq[j])
		}
		dst[at] = int64(len(dst) - at - 1)
	}
	return dst, true
}

// foldMin is the fewest buffered hits that are folded (see fold): enough
// that folding costs nothing on ordinary data, few enough that the buffer
// stays small (40 bytes a hit).
const foldMin = 1 << 18

// foldCluster is the fewest hits a cluster must be able to shed to be
// folded: its sums take the room of about four hits.
const foldCluster = 4

// fold bounds the memory of clusters that stay open for long (a hot pixel
// firing faster than dt, a cluster of the global definition spreading over
// a busy sensor). The buffer keeps every hit of a cluster until it is
// emitted, but later hits only look at the hits the matrix points to (the
// owners) and at the roots and their latest hits, and the emission needs
// only the sums of the others. So a cluster with enough such hits has them
// added to sums carried by its root, and they leave the buffer. The sums
// are exact integers: the features do not change. The members would, so
// nothing is folded when they are kept.
func (c *Clusterer) fold() {
	nodes := c.nodes
	shed := func(j, latest int32) bool { return !nodes[j].owner && j != latest }
	for r := int32(c.front); r < int32(len(nodes)); r++ {
		root := &nodes[r]
		if root.parent != r {
			continue
		}
		n := 0
		for j := root.next; j >= 0; j = nodes[j].next {
			if shed(j, root.latest) {
				n++
			}
		}
		if n < foldCluster {
			continue
		}
		f := c.foldsAt(r)
		last := r
		for j := root.next; j >= 0; {
			nd := &nodes[j]
			next := nd.next
			if !shed(j, root.latest) {
				nodes[last].next, nd.parent, last = j, r, j
			} else {
				var e float32
				if c.calibrated {
					e = c.e[j]
				}
				f.add(nd.x, nd.y, nd.toa, nd.tot, e, c.seq[j])
				if nd.folded {
					f.merge(c.folds[c.seq[j]])
					delete(c.folds, c.seq[j])
				}
				nd.parent = dead
			}
			j = next
		}
		nodes[last].next, root.tail = -1, last
	}
}

// foldsAt returns the folded sums carried by the root r, new ones if it
// carries none yet.
func (c *Clusterer) foldsAt(r int32) *foldedSums {
	if c.nodes[r].folded {
		return c.folds[c.seq[r]]
	}
	if c.folds == nil {
		c.folds = make(map[int64]*foldedSums)
	}
	f := &foldedSums{e: newEnergySums()}
	c.folds[c.seq[r]] = f
	c.nodes[r].folded = true
	return f
}
