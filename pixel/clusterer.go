package pixel

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
)

// dead marks a buffered hit whose cluster has been emitted.
const dead = -1

// emitEvery is how many hits pass between two looks for finished clusters.
const emitEvery = 256

// sentinelTime is far enough in the past that no time difference to it
// overflows or falls within any dt.
const sentinelTime Time = -1 << 61

// Stats counts what a clusterer has seen.
type Stats struct {
	Hits       int64 // hits given to Add
	Clustered  int64 // hits that went into clusters
	OutOfRange int64 // hits outside the sensor, not clustered
	Late       int64 // hits earlier than a hit already clustered
	Clusters   int64 // clusters emitted
}

// Clusterer is the sequential streaming clusterer (the paper's algorithm 1):
// a matrix with the last hit of every pixel and a union-find forest over the
// buffered hits whose root is the cluster's earliest hit. It is not safe
// for concurrent use.
type Clusterer struct {
	cfg         Config
	keepMembers bool
	calibrated  bool // the buffer carries energies (sticky once seen)

	stride  int      // padded matrix row length, Width+2
	offsets [9]int32 // the nine pixels around a hit in the padded matrix
	ref     []int32  // buffer index of each pixel's last hit, 0 if none
	occ     []byte   // one bit per pixel: ref is not 0 (small enough for L1)

	// The buffer: hits not yet emitted, and per-hit union-find state.
	buf     Hits
	seq     []int64 // arrival number of each hit in the whole stream
	parent  []int32 // union-find parent; dead once emitted
	next    []int32 // next member of the same cluster, or -1
	tail    []int32 // at a root: last member of the list
	latest  []int32 // at a root: the cluster's latest hit
	front   int     // hits in [1, front) are all dead
	now     Time    // latest time seen
	nextSeq int64   // arrival number of the next hit
	remap   []int32 // compaction scratch
	order   []int32 // emission scratch

	compactAt int // compact once this many hits at the front are dead

	out    Clusters
	nextID int64
	stats  Stats
}

// NewClusterer returns a clusterer for cfg.
func NewClusterer(cfg Config) (*Clusterer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Clusterer{cfg: cfg, stride: cfg.Width + 2, now: -1 << 63, compactAt: 1 << 16}
	c.ref = make([]int32, c.stride*(cfg.Height+2))
	c.occ = make([]byte, len(c.ref)/8+16)
	// Buffer index 0 is a sentinel that empty pixels point to: a hit too
	// old to join anything, a root of its own.
	c.extend(1)
	c.buf.ToA[0] = sentinelTime
	c.seq[0] = -1
	c.parent[0], c.next[0], c.tail[0], c.latest[0] = 0, -1, 0, 0
	c.front = 1
	c.offsets = neighbourOffsets(c.stride)
	c.out.Reset()
	return c, nil
}

// KeepMembers makes the emitted [Clusters] carry the hits of each cluster.
func (c *Clusterer) KeepMembers(keep bool) { c.keepMembers = keep }

// Stats returns the counts so far.
func (c *Clusterer) Stats() Stats { return c.stats }

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
	c.stats.Hits += int64(h.Len())
	if h.Calibrated() && !c.calibrated {
		c.calibrated = true
		c.buf.E = append(c.buf.E[:0], make([]float32, c.buf.Len())...)
	}
	// Emitting often clears the matrix of finished clusters, so that most
	// new hits find an empty neighbourhood (the fast path).
	for from := 0; from < h.Len(); from += emitEvery {
		c.addRange(h, from, min(h.Len(), from+emitEvery))
		c.emit(emitClosed)
	}
	c.stats.Clustered = c.stats.Hits - c.stats.OutOfRange
	return &c.out
}

// Flush emits every buffered cluster; call it at the end of the stream.
func (c *Clusterer) Flush() *Clusters {
	c.out.Reset()
	c.emit(emitAll)
	return &c.out
}

// extend grows every per-hit column of the buffer to length n.
func (c *Clusterer) extend(n int) {
	b := &c.buf
	b.X, b.Y, b.ToA, b.ToT = growLen(b.X, n), growLen(b.Y, n), growLen(b.ToA, n), growLen(b.ToT, n)
	if c.calibrated {
		b.E = growLen(b.E, n)
	}
	c.parent, c.next, c.tail, c.latest = growLen(c.parent, n), growLen(c.next, n), growLen(c.tail, n), growLen(c.latest, n)
	c.seq = growLen(c.seq, n)
}

// truncate cuts every per-hit column to length n.
func (c *Clusterer) truncate(n int) {
	b := &c.buf
	b.X, b.Y, b.ToA, b.ToT = b.X[:n], b.Y[:n], b.ToA[:n], b.ToT[:n]
	if c.calibrated {
		b.E = b.E[:n]
	}
	c.parent, c.next, c.tail, c.latest = c.parent[:n], c.next[:n], c.tail[:n], c.latest[:n]
	c.seq = c.seq[:n]
}

func growLen[T any](s []T, n int) []T {
	if cap(s) < n {
		ns := make([]T, n, 2*n)
		copy(ns, s)
		return ns
	}
	return s[:n]
}

// addRange is the hot path: hits [from, to) of h join the clusters around
// them. The columns are local slices so that the loop runs on registers.
func (c *Clusterer) addRange(h *Hits, from, to int) {
	n0 := c.buf.Len()
	c.extend(n0 + to - from)
	bx, by, btoa, btot := c.buf.X, c.buf.Y, c.buf.ToA, c.buf.ToT
	parent, next, tail, latest, seq := c.parent, c.next, c.tail, c.latest, c.seq
	ref, occ := c.ref, c.occ
	offsets := &c.offsets // bit q of a candidate mask is the pixel at p+offsets[q]
	stride := int32(c.stride)
	width, height := c.cfg.Width, c.cfg.Height
	dt := c.cfg.DtMax
	local, window := c.cfg.Definition == Local, c.cfg.Definition == Window
	now := c.now
	arrival := c.nextSeq
	calibrated := h.Calibrated()
	i := int32(n0)
	for k := from; k < to; k++ {
		x, y := h.X[k], h.Y[k]
		if int(x) >= width || int(y) >= height {
			c.stats.OutOfRange++
			continue
		}
		t := h.ToA[k]
		bx[i], by[i], btoa[i], btot[i] = x, y, t, h.ToT[k]
		if calibrated {
			c.buf.E[i] = h.E[k]
		} else if c.calibrated {
			c.buf.E[i] = 0
		}
		parent[i], next[i], tail[i], latest[i] = i, -1, i, i
		seq[i] = arrival
		arrival++
		late := t < now
		if late {
			c.stats.Late++
		} else {
			now = t
		}
		p := int32(int(y)+1)*stride + int32(x) + 1
		// Fast path: all nine pixels empty, seen in the occupancy bits
		// without touching the larger matrix.
		if occupied3(occ, p-stride-1)|occupied3(occ, p-1)|occupied3(occ, p+stride-1) == 0 {
			ref[p] = i
			occ[p>>3] |= 1 << (p & 7)
			i++
			continue
		}
		// Which of the nine pixels hold a hit that may join: for the local
		// definition one within dt, otherwise any (the sentinel never
		// joins). Straight-line code without branches; the loop below then
		// visits only the candidates, usually one to three.
		up, mid, down := ref[p-stride-1:p-stride+2], ref[p-1:p+2], ref[p+stride-1:p+stride+2]
		var cand uint32
		if local {
			cand = near(btoa, up[0], t, dt) | near(btoa, up[1], t, dt)<<1 | near(btoa, up[2], t, dt)<<2 |
				near(btoa, mid[0], t, dt)<<3 | near(btoa, mid[1], t, dt)<<4 | near(btoa, mid[2], t, dt)<<5 |
				near(btoa, down[0], t, dt)<<6 | near(btoa, down[1], t, dt)<<7 | near(btoa, down[2], t, dt)<<8
		} else {
			cand = taken(up[0]) | taken(up[1])<<1 | taken(up[2])<<2 |
				taken(mid[0])<<3 | taken(mid[1])<<4 | taken(mid[2])<<5 |
				taken(down[0])<<6 | taken(down[1])<<7 | taken(down[2])<<8
		}
		root := int32(-1)
		for ; cand != 0; cand &= cand - 1 {
			r := find(parent, ref[p+offsets[bits.TrailingZeros32(cand)]])
			if !local {
				open := btoa[latest[r]]
				if window {
					open = btoa[r]
				}
				if d := t - open; d > dt || d < -dt {
					continue
				}
			}
			switch {
			case root < 0:
				root = r
			case r != root:
				// Join under the earlier root, concatenating the lists.
				a, b := min(root, r), max(root, r)
				parent[b] = a
				next[tail[a]] = b
				tail[a] = tail[b]
				if btoa[latest[b]] > btoa[latest[a]] {
					latest[a] = latest[b]
				}
				root = a
			}
		}
		if root >= 0 {
			parent[i] = root
			next[tail[root]] = i
			tail[root] = i
			if t >= btoa[latest[root]] {
				latest[root] = i
			}
		}
		if j := ref[p]; !late || btoa[j] <= t {
			ref[p] = i
			occ[p>>3] |= 1 << (p & 7)
		}
		i++
	}
	c.now = now
	c.nextSeq = arrival
	c.truncate(int(i))
}

// neighbourOffsets returns the offsets of the nine pixels around a pixel
// (itself included) in a padded matrix with rows of stride, row by row:
// bit q of a neighbour mask stands for offset q.
func neighbourOffsets(stride int) [9]int32 {
	var o [9]int32
	k := 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			o[k] = int32(dy*stride + dx)
			k++
		}
	}
	return o
}

// near is 1 when hit j is at most dt away from t, else 0, without a branch.
func near(toa []Time, j int32, t, dt Time) uint32 {
	_, borrow := bits.Sub64(uint64(t-toa[j]+dt), uint64(2*dt)+1, 0)
	return uint32(borrow)
}

// taken is 1 for a matrix entry that points to a hit, 0 for the sentinel.
func taken(j int32) uint32 { return uint32(-j) >> 31 }

// occupied3 returns the occupancy bits of pixels q, q+1 and q+2.
func occupied3(occ []byte, q int32) uint64 {
	return binary.LittleEndian.Uint64(occ[q>>3:]) >> (q & 7) & 7
}

// find returns the root of j, halving the path on the way.
func find(parent []int32, j int32) int32 {
	for parent[j] != j {
		parent[j] = parent[parent[j]]
		j = parent[j]
	}
	return j
}

// emitMode says which clusters emit writes out.
type emitMode uint8

const (
	emitClosed    emitMode = iota // closed clusters up to the first open one
	emitAll                       // every cluster: the end of the stream
	emitAllClosed                 // every closed cluster; the clusterer is reset after
)

// emit writes out clusters in root order while they are closed (all of
// them when flushing) and compacts the buffer when it pays off.
func (c *Clusterer) emit(mode emitMode) {
	n := int32(c.buf.Len())
	limit := c.now - c.cfg.DtMax
	btoa := c.buf.ToA
	calibrated := c.calibrated
	parent, latest := c.parent, c.latest
	window := c.cfg.Definition == Window
	out := &c.out
	out.Calibrated = calibrated
	k := out.Len()
	out.extend(k + int(n) - c.front) // at most one cluster per hit
	id := c.nextID
	i := int32(c.front)
	for ; i < n; i++ {
		if parent[i] == dead {
			continue
		}
		// Every root before i is emitted, so i is a root (except after an
		// open cluster was skipped). Its cluster can still take hits while
		// its first hit (window definition) or its latest hit (otherwise)
		// is within dt of the present.
		open := btoa[latest[i]]
		if window {
			open = btoa[i]
		}
		if mode != emitAll && open >= limit || parent[i] != i {
			if mode == emitAllClosed {
				continue
			}
			break
		}
		f := c.summarise(i)
		out.ID[k] = id
		out.set(k, c.seq[i], &f)
		k++
		id++
		if c.keepMembers {
			c.appendMembers(i)
		}
	}
	c.nextID = id
	out.truncate(k)
	c.stats.Clusters = c.nextID
	if mode == emitAllClosed {
		return
	}
	c.front = int(i)
	if c.front == int(n) || c.front >= c.compactAt && 2*c.front >= int(n) {
		c.compact()
	}
}

// summarise returns the features of the cluster rooted at r and marks its
// hits dead, clearing the matrix entries that point to them.
func (c *Clusterer) summarise(r int32) features {
	b := &c.buf
	bx, by, btoa, btot, next := b.X, b.Y, b.ToA, b.ToT, c.next
	s := newHitSums(bx[r], by[r], btoa[r], btot[r])
	c.forget(r, bx[r], by[r])
	if !c.calibrated {
		for j := next[r]; j >= 0; j = next[j] {
			x, y := bx[j], by[j]
			s.add(x, y, btoa[j], btot[j])
			c.forget(j, x, y)
		}
		return s.result()
	}
	e := newEnergySums()
	e.add(bx[r], by[r], b.E[r])
	for j := next[r]; j >= 0; j = next[j] {
		x, y := bx[j], by[j]
		s.add(x, y, btoa[j], btot[j])
		e.add(x, y, b.E[j])
		c.forget(j, x, y)
	}
	return e.result(&s)
}

// forget marks hit j on pixel (x, y) dead and clears the matrix entry if it
// points to j.
func (c *Clusterer) forget(j int32, x, y uint16) {
	c.parent[j] = dead
	if p := (int(y)+1)*c.stride + int(x) + 1; c.ref[p] == j {
		c.ref[p] = 0
		c.occ[p>>3] &^= 1 << (p & 7)
	}
}

// appendMembers adds the hits of the cluster rooted at r to the output in
// time order (ties by arrival).
func (c *Clusterer) appendMembers(r int32) {
	b := &c.buf
	c.order = c.order[:0]
	for j := r; j >= 0; j = c.next[j] {
		c.order = append(c.order, j)
	}
	slices.SortFunc(c.order, func(u, v int32) int {
		return cmp.Or(cmp.Compare(b.ToA[u], b.ToA[v]), cmp.Compare(u, v))
	})
	for _, j := range c.order {
		c.out.Members.AppendFrom(b, int(j))
	}
	c.out.Start = append(c.out.Start, c.out.Members.Len())
}

// compact drops the dead hits, all of those before the front and the ones
// after it, renumbering the survivors from 1 (after the sentinel) and every
// reference to them.
func (c *Clusterer) compact() {
	n := c.buf.Len()
	front := c.front
	if cap(c.remap) < n-front {
		c.remap = make([]int32, n-front)
	}
	remap := c.remap[:n-front]
	b := &c.buf
	calibrated := c.calibrated
	k := int32(1)
	for j := front; j < n; j++ {
		if c.parent[j] == dead {
			continue
		}
		remap[j-front] = k
		if p := (int(b.Y[j])+1)*c.stride + int(b.X[j]) + 1; c.ref[p] == int32(j) {
			c.ref[p] = k
		}
		b.X[k], b.Y[k], b.ToA[k], b.ToT[k] = b.X[j], b.Y[j], b.ToA[j], b.ToT[j]
		if calibrated {
			b.E[k] = b.E[j]
		}
		c.parent[k], c.next[k], c.seq[k] = c.parent[j], c.next[j], c.seq[j]
		if c.parent[j] == int32(j) {
			c.tail[k], c.latest[k] = c.tail[j], c.latest[j]
		} else { // not read at a non-root; keep it a valid index
			c.tail[k], c.latest[k] = int32(j), int32(j)
		}
		k++
	}
	at := func(old int32) int32 { return remap[int(old)-front] }
	for j := int32(1); j < k; j++ {
		c.parent[j] = at(c.parent[j])
		if c.next[j] >= 0 {
			c.next[j] = at(c.next[j])
		}
		c.tail[j] = at(c.tail[j])
		c.latest[j] = at(c.latest[j])
	}
	c.truncate(int(k))
	c.front = 1
}

// restart empties the clusterer for a new stream whose first hit has
// arrival number first. The pixel matrix is cleared by visiting the
// buffered hits, as cheap as the hits are few.
func (c *Clusterer) restart(first int64) {
	for j := 1; j < c.buf.Len(); j++ {
		p := (int(c.buf.Y[j])+1)*c.stride + int(c.buf.X[j]) + 1
		c.ref[p] = 0
		c.occ[p>>3] &^= 1 << (p & 7)
	}
	c.truncate(1)
	c.calibrated, c.buf.E = false, c.buf.E[:0]
	c.front = 1
	c.now = -1 << 63
	c.nextSeq = first
	c.nextID = 0
	c.stats = Stats{}
	c.out.Reset()
}

// openState appends to dst a description of the clusters that later hits
// can still join: for each, in root order, its size and the arrival
// numbers of its hits in list order. Two clusterers at the same point of a
// time-ordered stream with equal open states cluster the rest of it
// identically, down to the order in which features are summed.
func (c *Clusterer) openState(dst []int64) []int64 {
	limit := c.now - c.cfg.DtMax
	window := c.cfg.Definition == Window
	for i := int32(c.front); i < int32(c.buf.Len()); i++ {
		if c.parent[i] != i {
			continue
		}
		open := c.buf.ToA[c.latest[i]]
		if window {
			open = c.buf.ToA[i]
		}
		if open < limit {
			continue
		}
		at := len(dst)
		dst = append(dst, 0)
		for j := i; j >= 0; j = c.next[j] {
			dst = append(dst, c.seq[j])
		}
		dst[at] = int64(len(dst) - at - 1)
	}
	return dst
}
