package pixel

import (
	"cmp"
	"slices"
)

// dead marks a buffered hit whose cluster has been emitted.
const dead = -1

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
	ref     []int32  // buffer index of each pixel's last hit, or -1

	// The buffer: hits not yet emitted, and per-hit union-find state.
	buf    Hits
	parent []int32 // union-find parent; dead once emitted
	next   []int32 // next member of the same cluster, or -1
	tail   []int32 // at a root: last member of the list
	latest []int32 // at a root: the cluster's latest hit
	front  int     // hits before front are all dead
	now    Time    // latest time seen
	remap  []int32 // compaction scratch
	order  []int32 // emission scratch

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
	for i := range c.ref {
		c.ref[i] = -1
	}
	k := 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			c.offsets[k] = int32(dy*c.stride + dx)
			k++
		}
	}
	c.out.Reset()
	return c, nil
}

// KeepMembers makes the emitted [Clusters] carry the hits of each cluster.
func (c *Clusterer) KeepMembers(keep bool) { c.keepMembers = keep }

// Config returns the clusterer's configuration.
func (c *Clusterer) Config() Config { return c.cfg }

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
	c.buf.Reserve(h.Len())
	calibrated := h.Calibrated()
	if calibrated && !c.calibrated {
		c.calibrated = true
		c.buf.E = append(c.buf.E[:0], make([]float32, c.buf.Len())...)
	}
	for k := range h.ToA {
		x, y := h.X[k], h.Y[k]
		if int(x) >= c.cfg.Width || int(y) >= c.cfg.Height {
			c.stats.OutOfRange++
			continue
		}
		var e float32
		if calibrated {
			e = h.E[k]
		}
		c.addHit(x, y, h.ToA[k], h.ToT[k], e)
	}
	c.stats.Clustered = c.stats.Hits - c.stats.OutOfRange
	c.emit(false)
	return &c.out
}

// Flush emits every buffered cluster; call it at the end of the stream.
func (c *Clusterer) Flush() *Clusters {
	c.out.Reset()
	c.emit(true)
	return &c.out
}

// addHit is the hot path: one hit joins the clusters around it.
func (c *Clusterer) addHit(x, y uint16, t Time, tot uint16, e float32) {
	i := int32(len(c.buf.ToA))
	c.buf.X = append(c.buf.X, x)
	c.buf.Y = append(c.buf.Y, y)
	c.buf.ToA = append(c.buf.ToA, t)
	c.buf.ToT = append(c.buf.ToT, tot)
	if c.calibrated {
		c.buf.E = append(c.buf.E, e)
	}
	c.parent = append(c.parent, i)
	c.next = append(c.next, -1)
	c.tail = append(c.tail, i)
	c.latest = append(c.latest, i)

	late := t < c.now
	if late {
		c.stats.Late++
	} else {
		c.now = t
	}
	dt := c.cfg.DtMax
	toa := c.buf.ToA
	ref := c.ref
	p := int32((int(y)+1)*c.stride + int(x) + 1)
	root := int32(-1)
	for _, off := range c.offsets {
		j := ref[p+off]
		if j < 0 {
			continue
		}
		var r int32
		if c.cfg.Definition == Local {
			if d := t - toa[j]; d > dt || d < -dt {
				continue
			}
			r = c.find(j)
		} else {
			r = c.find(j)
			if d := t - c.openTime(r); d > dt || d < -dt {
				continue
			}
		}
		switch {
		case root < 0:
			root = r
		case r != root:
			root = c.union(root, r)
		}
	}
	if root >= 0 {
		c.parent[i] = root
		c.next[c.tail[root]] = i
		c.tail[root] = i
		if t >= toa[c.latest[root]] {
			c.latest[root] = i
		}
	}
	if j := ref[p]; !late || j < 0 || toa[j] <= t {
		ref[p] = i
	}
}

// openTime is the time that decides whether the cluster rooted at r can
// still take hits: its first hit for the window definition, its latest
// otherwise (for the local one this is when its last edge can form).
func (c *Clusterer) openTime(r int32) Time {
	if c.cfg.Definition == Window {
		return c.buf.ToA[r]
	}
	return c.buf.ToA[c.latest[r]]
}

func (c *Clusterer) find(j int32) int32 {
	parent := c.parent
	for parent[j] != j {
		parent[j] = parent[parent[j]]
		j = parent[j]
	}
	return j
}

// union joins the clusters rooted at a and b (a != b) under the earlier
// root and returns it.
func (c *Clusterer) union(a, b int32) int32 {
	if b < a {
		a, b = b, a
	}
	c.parent[b] = a
	c.next[c.tail[a]] = b
	c.tail[a] = c.tail[b]
	if c.buf.ToA[c.latest[b]] > c.buf.ToA[c.latest[a]] {
		c.latest[a] = c.latest[b]
	}
	return a
}

// emit writes out clusters in root order while they are closed (all of
// them when flushing) and compacts the buffer when it pays off.
func (c *Clusterer) emit(flush bool) {
	n := int32(c.buf.Len())
	limit := c.now - c.cfg.DtMax
	i := int32(c.front)
	for ; i < n; i++ {
		if c.parent[i] == dead {
			continue
		}
		// Every root before i is emitted, so i is a root.
		if !flush && c.openTime(i) >= limit {
			break
		}
		c.emitCluster(i)
	}
	c.front = int(i)
	if c.front == int(n) || c.front >= c.compactAt && 2*c.front >= int(n) {
		c.compact()
	}
}

// emitCluster appends the cluster rooted at r to the output and marks its
// hits dead, clearing the matrix entries that point to them.
func (c *Clusterer) emitCluster(r int32) {
	var s clusterSummary
	s.reset()
	calibrated := c.calibrated
	b := &c.buf
	c.order = c.order[:0]
	for j := r; j >= 0; j = c.next[j] {
		var e float32
		if calibrated {
			e = b.E[j]
		}
		s.add(b.X[j], b.Y[j], b.ToA[j], b.ToT[j], e, calibrated)
		c.parent[j] = dead
		if p := (int(b.Y[j])+1)*c.stride + int(b.X[j]) + 1; c.ref[p] == j {
			c.ref[p] = -1
		}
		if c.keepMembers {
			c.order = append(c.order, j)
		}
	}
	c.out.Calibrated = calibrated
	c.out.append(c.nextID, &s)
	c.nextID++
	c.stats.Clusters++
	if c.keepMembers {
		slices.SortFunc(c.order, func(u, v int32) int {
			return cmp.Or(cmp.Compare(b.ToA[u], b.ToA[v]), cmp.Compare(u, v))
		})
		for _, j := range c.order {
			c.out.Members.AppendFrom(b, int(j))
		}
		c.out.Start = append(c.out.Start, c.out.Members.Len())
	}
}

// compact drops the dead hits, all of those before the front and the ones
// after it, renumbering the survivors and every reference to them.
func (c *Clusterer) compact() {
	n := c.buf.Len()
	front := c.front
	if cap(c.remap) < n-front {
		c.remap = make([]int32, n-front)
	}
	remap := c.remap[:n-front]
	b := &c.buf
	calibrated := c.calibrated
	k := int32(0)
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
		c.parent[k], c.next[k] = c.parent[j], c.next[j]
		if c.parent[j] == int32(j) {
			c.tail[k], c.latest[k] = c.tail[j], c.latest[j]
		} else { // not read at a non-root; keep it a valid index
			c.tail[k], c.latest[k] = int32(j), int32(j)
		}
		k++
	}
	at := func(old int32) int32 { return remap[int(old)-front] }
	for j := range k {
		c.parent[j] = at(c.parent[j])
		if c.next[j] >= 0 {
			c.next[j] = at(c.next[j])
		}
		c.tail[j] = at(c.tail[j])
		c.latest[j] = at(c.latest[j])
	}
	b.X, b.Y, b.ToA, b.ToT = b.X[:k], b.Y[:k], b.ToA[:k], b.ToT[:k]
	if calibrated {
		b.E = b.E[:k]
	}
	c.parent, c.next, c.tail, c.latest = c.parent[:k], c.next[:k], c.tail[:k], c.latest[:k]
	c.front = 0
}
