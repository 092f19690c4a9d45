package pixel

import "math/bits"

// Isolated groups: in a time-ordered stream, a hit more than dt after every
// earlier hit can join none of their clusters, under any definition, and
// neither can any later hit. A run of hits that starts after such a gap and
// is followed by one is therefore clustered on its own, exactly as the
// definition's text says, and its clusters are written out at once. A
// short run (a photon's few hits) takes a few pairwise tests, without the
// pixel matrix; a longer one (a track, an ion) takes the matrix, but not
// the buffer of open clusters that a stream without gaps needs: its hits
// are not copied, and nothing has to be looked for to emit. Sparse data (a
// source of one particle per microsecond, say) is mostly such runs; dense
// data has no gaps and goes through the buffer.

// isolatedMax is the largest group clustered by pairwise tests, which cost
// the square of its size; larger groups go through the matrix.
const isolatedMax = 16

// groupMax is the largest group clustered on the matrix by clusterGroup,
// whose scratch grows with it; larger ones go through the buffer. Larger
// limits measured no faster on Pb ions.
const groupMax = 1 << 12

// isolatedGroup is linkOpen's scratch for one group: a union-find whose
// root is the cluster's first hit, and the time the definition compares
// with dt, at the roots: the cluster's latest hit (global) or its first
// (window).
type isolatedGroup struct {
	parent [isolatedMax]uint8
	open   [isolatedMax]Time
}

func (g *isolatedGroup) find(j uint8) uint8 {
	for g.parent[j] != j {
		j = g.parent[j]
	}
	return j
}

// linkLocal returns the clusters of a group (in time order) by the local
// definition, neighbours at most dt apart: the set of each hit's cluster,
// as bits of the group's hits, and the set of the clusters' first hits.
//
// The group is small, and the neighbours of a hit among the ones before
// it are found without a branch on the data: a pairwise test whose outcome
// follows the data mispredicts, at about the cost of a dozen tests done
// with arithmetic (see pixelsApart). A branch is taken only where a hit
// joins two clusters.
func linkLocal(xs, ys []uint16, ts []Time, dt Time) (sets [isolatedMax]uint16, firsts uint16) {
	n := len(xs)
	ys, ts = ys[:n], ts[:n]
	var rootOf [isolatedMax]uint8
	var lifted [isolatedMax]uint64 // see pixelsApart
	for q := range n {
		at, early := pixelWord(xs[q], ys[q]), ts[q]-dt
		lifted[q&(isolatedMax-1)] = at + pixelLift
		var near uint32 // bit p for hit p, shifted in from the last
		before, times := lifted[:q&(isolatedMax-1)], ts[:q]
		for p := len(before) - 1; p >= 0; p-- {
			// The apart word is below 2^63, so that minus one it has the
			// sign bit exactly when it is zero; the time difference has it
			// when hit p is more than dt earlier.
			apart := pixelsApart(before[p], at)
			near = near*2 + uint32(((apart-1)&^uint64(times[p]-early))>>63)
		}
		self := uint16(1) << q
		rootOf[q&(isolatedMax-1)] = uint8(q)
		r := rootOf[bits.TrailingZeros32(near|uint32(self))&(isolatedMax-1)] & (isolatedMax - 1)
		set := sets[r] | self
		if rest := uint16(near) &^ set; rest != 0 { // q joins two clusters or more
			for ; rest != 0; rest &^= set {
				set |= sets[rootOf[bits.TrailingZeros16(rest)&(isolatedMax-1)]&(isolatedMax-1)]
			}
			r = uint8(bits.TrailingZeros16(set)) & (isolatedMax - 1)
			for m := set; m != 0; m &= m - 1 {
				rootOf[bits.TrailingZeros16(m)&(isolatedMax-1)] = r
			}
		}
		sets[r] = set
		rootOf[q&(isolatedMax-1)] = r
	}
	for q := range n {
		firsts |= 1 << rootOf[q&(isolatedMax-1)]
	}
	return sets, firsts
}

// pixelWord is the pixel x, y as the word x<<32 | y, for pixelsApart.
func pixelWord(x, y uint16) uint64 { return uint64(x)<<32 | uint64(y) }

// pixelsApart tests both coordinates of two pixels at once, in the two
// 32-bit halves of a word: it is zero exactly when pixel p (as pixelWord,
// plus pixelLift) and pixel q (as pixelWord) are 8-neighbours or the same,
// and always below 2^63.
//
// Lifted p minus q leaves in each half 2^16 plus the coordinates'
// difference plus one: always positive, so the halves do not borrow from
// each other, and 2^16 + {0, 1, 2} exactly for neighbours. Flipping bit
// 16 of each half maps those to 0, 1 and 2 and everything else higher (up
// to 2^18); adding one to each half then gives 1..3 for neighbours, 4 or
// more otherwise, so that only neighbours leave no bit above the lowest
// two.
func pixelsApart(p, q uint64) uint64 {
	return (((p - q) ^ (1<<(32+16) | 1<<16)) + (1<<32 | 1)) & 0xffff_fffc_ffff_fffc
}

// pixelLift is added to the first pixel of pixelsApart (see there).
const pixelLift = (1<<16+1)<<32 | (1<<16 + 1)

// linkOpen links the hits of a group (in time order) by the global
// definition (latest) or the window definition: each hit joins the open
// clusters with a hit on one of the nine pixels around it.
func (g *isolatedGroup) linkOpen(xs, ys []uint16, ts []Time, dt Time, latest bool) (sets [isolatedMax]uint16, firsts uint16) {
	ys, ts = ys[:len(xs)], ts[:len(xs)]
	var lifted [isolatedMax]uint64 // see pixelsApart
	clusters := 0                  // among the hits so far: once one, a hit needs one link
	for q := range xs {
		root := uint8(q)
		g.parent[q], g.open[q] = root, ts[q]
		clusters++
		at, t := pixelWord(xs[q], ys[q]), ts[q]
		lifted[q&(isolatedMax-1)] = at + pixelLift
		for p := range q {
			if pixelsApart(lifted[p&(isolatedMax-1)], at) != 0 || g.parent[p] == root {
				continue
			}
			if r := g.find(uint8(p)); r != root && t-g.open[r] <= dt {
				a := g.union(r, root)
				if latest {
					g.open[a] = max(g.open[r], g.open[root])
				}
				root = a
				if clusters--; clusters == 1 {
					break
				}
			}
		}
		if latest {
			g.open[root] = t // the latest hit: the times are in order
		}
	}
	return g.sets(len(xs))
}

// union puts the roots a and b under the earlier one, which it returns.
func (g *isolatedGroup) union(a, b uint8) uint8 {
	a, b = min(a, b), max(a, b)
	g.parent[b] = a
	return a
}

// sets returns the clusters of the first n hits as linkLocal does, the
// set of each cluster at its first hit. A parent comes before its child,
// so one step from a resolved parent finds the root.
func (g *isolatedGroup) sets(n int) (sets [isolatedMax]uint16, firsts uint16) {
	label := g.parent[:n]
	for q := range label {
		r := label[label[q]]
		label[q] = r
		sets[r&(isolatedMax-1)] |= 1 << q
		firsts |= 1 << r
	}
	return sets, firsts
}

// clusterIsolated clusters the isolated groups of h from hit i on, which
// must be more than dt after every earlier hit, as long as they come:
// it writes their clusters to out from index k, and returns the index
// after the last cluster and the first hit it did not take.
func (c *Clusterer) clusterIsolated(out *Clusters, k int, h *Hits, i int) (int, int) {
	xs, ys, ts, tots := h.X, h.Y, h.ToA, h.ToT
	ys, ts, tots = ys[:len(xs)], ts[:len(xs)], tots[:len(xs)]
	dt, def := c.cfg.Dt, c.cfg.Definition
	width, height := uint16(c.cfg.Width-1), uint16(c.cfg.Height-1)
	if need := k + len(xs) - i; len(out.ID) < need { // buffered clusters took the room
		out.extend(need)
	}
	// A group's clusters go out in root order: none may span more than
	// LongSpan hits (a limit only tests lower that far).
	most := int(min(groupMax, c.cfg.span()+1))
	var g isolatedGroup
	var s hitSums
	// Without energies, the clusters wait in c.pend and go out a run at a
	// time (see storeRun), and their members, when kept, go out in runs
	// of consecutive hits (see memberRun).
	plain, keep := !c.calibrated, c.keepMembers
	run := memberRun{i, i}
	for i < len(xs) && ts[i]-dt > c.now {
		j := groupEnd(xs, ys, ts, i, width, height, dt, most)
		if j < 0 {
			break
		}
		if j-i > isolatedMax {
			if keep {
				run.flush(out, h)
			}
			k = c.clusterGroup(out, k, h, i, j)
			c.now, c.nextSeq, i = ts[j-1], c.nextSeq+int64(j-i), j
			continue
		}
		if j == i+1 { // a cluster of one hit: the most common case
			if plain {
				c.nextPending(c.nextSeq).start(xs[i], ys[i], ts[i], tots[i])
				k = c.addPending(out, k)
				if keep {
					run.extend(out, h, i, j)
				}
			} else {
				s.start(xs[i], ys[i], ts[i], tots[i])
				k = c.storeIsolated(out, k, h, i, &s, 1)
			}
			c.now, c.nextSeq, i = ts[i], c.nextSeq+1, j
			continue
		}
		gx, gy, gt := xs[i:j], ys[i:j], ts[i:j]
		var sets [isolatedMax]uint16
		var firsts uint16
		if def == Local {
			sets, firsts = linkLocal(gx, gy, gt, dt)
		} else {
			sets, firsts = g.linkOpen(gx, gy, gt, dt, def == Global)
		}
		for ; firsts != 0; firsts &= firsts - 1 {
			r := bits.TrailingZeros16(firsts)
			ps := &s
			if plain {
				ps = c.nextPending(c.nextSeq + int64(r))
			}
			members := sets[r&(isolatedMax-1)]
			ps.start(gx[r], gy[r], gt[r], tots[i+r])
			for m := members & (members - 1); m != 0; m &= m - 1 {
				q := bits.TrailingZeros16(m)
				ps.countAt(gt[q])
				ps.addPixel(gx[q], gy[q], tots[i+q])
			}
			if plain {
				k = c.addPending(out, k)
				if keep {
					run.add(out, h, i, j, members)
				}
			} else {
				k = c.storeIsolated(out, k, h, i, &s, members)
			}
		}
		c.now, c.nextSeq, i = gt[len(gt)-1], c.nextSeq+int64(j-i), j
	}
	if keep && plain {
		run.flush(out, h)
	}
	c.flushPending(out, k)
	return k, i
}

// keepHits appends the hits of h from index from at the offsets members
// (in time order) to the output's members, as those of its latest
// cluster: at once when they are consecutive, as a track's are.
func keepHits(out *Clusters, h *Hits, from int, members []int32) {
	m := &out.Members
	if first, last := int(members[0]), int(members[len(members)-1]); last-first == len(members)-1 {
		m.AppendRange(h, from+first, from+last+1)
	} else {
		m.gather(h.view(from, h.Len()), members)
	}
	out.Start = append(out.Start, m.Len())
}

// memberRun is a run of consecutive hits of a batch, [from, to), that are
// the members of the latest clusters of the output, in order, and not
// yet copied there: consecutive groups that are each one cluster (most
// groups) have their members copied at once.
type memberRun struct{ from, to int }

// extend makes hits [i, j) of h the members of the output's latest
// cluster.
func (r *memberRun) extend(out *Clusters, h *Hits, i, j int) {
	if r.to != i {
		r.flush(out, h)
		r.from = i
	}
	r.to = j
	out.Start = append(out.Start, out.Members.Len()+r.to-r.from)
}

// add makes the hits of h from index i at the bits of members the members
// of the output's latest cluster; group [i, j) holds them.
func (r *memberRun) add(out *Clusters, h *Hits, i, j int, members uint16) {
	if members == 1<<(j-i)-1 { // the whole group
		r.extend(out, h, i, j)
		return
	}
	r.flush(out, h)
	var offsets [isolatedMax]int32
	n := 0
	for ; members != 0; members &= members - 1 {
		offsets[n] = int32(bits.TrailingZeros16(members))
		n++
	}
	keepHits(out, h, i, offsets[:n])
}

// flush copies the run's hits to the output's members.
func (r *memberRun) flush(out *Clusters, h *Hits) {
	if r.to > r.from {
		out.Members.AppendRange(h, r.from, r.to)
	}
	r.from = r.to
}

// pendMax is the most clusters clusterIsolated holds before it writes
// them out (a power of two).
const pendMax = 64

// pendingClusters are the clusters before index k of the output whose
// ids and features are not written yet.
type pendingClusters struct {
	n     int
	roots [pendMax]int64
	sums  [pendMax]hitSums
}

// nextPending returns the sums of the next pending cluster, whose first
// hit has arrival number root, for the caller to fill in.
func (c *Clusterer) nextPending(root int64) *hitSums {
	p := &c.pend
	n := p.n & (pendMax - 1)
	p.roots[n] = root
	return &p.sums[n]
}

// addPending makes the cluster filled in after nextPending cluster k of
// out, writing the pending ones (and numbering them) once they are
// pendMax, and returns k+1.
func (c *Clusterer) addPending(out *Clusters, k int) int {
	if c.pend.n++; c.pend.n == pendMax {
		c.writePending(out, k+1)
	}
	return k + 1
}

// flushPending writes the pending clusters, which end before index k of
// out.
func (c *Clusterer) flushPending(out *Clusters, k int) {
	if c.pend.n > 0 {
		c.writePending(out, k)
	}
}

// writePending is flushPending for at least one pending cluster.
func (c *Clusterer) writePending(out *Clusters, k int) {
	p := &c.pend
	out.storeRun(k-p.n, c.nextID, p.roots[:p.n], p.sums[:p.n])
	c.nextID += int64(p.n)
	p.n = 0
}

// groupEnd returns j such that hits [i, j) are an isolated group: in the
// sensor, in time order, hit j in the sensor and more than dt after hit
// j-1; or -1 when they are not, or the group has more than most hits.
func groupEnd(xs, ys []uint16, ts []Time, i int, width, height uint16, dt Time, most int) int {
	if xs[i] > width || ys[i] > height {
		return -1
	}
	for j := i + 1; j < len(xs) && j <= i+most; j++ {
		if xs[j] > width || ys[j] > height {
			return -1
		}
		switch d := ts[j] - ts[j-1]; {
		case d > dt:
			return j
		case d < 0:
			return -1
		}
	}
	return -1
}

// groupScratch is the state of clusterGroup: where it joins the hits
// (a space lent by the lanes, or its own), each hit's cluster (its slot),
// the clusters' roots and sums by slot, and the hits ordered by cluster.
type groupScratch struct {
	lent, own                   *groupSpace
	slot, roots, members, start []int32
	sums                        []hitSums
}

// groupSpace is where clusterGroup joins a group's hits: a pixel matrix
// of its own (the clusterer's holds the buffer's hits) and the union-find.
// Neither keeps anything from one group to the next, the matrix's
// occupancy being cleared as the clusters are summed, so that any
// clusterer may use any space. Lanes lend one to each worker, whichever
// clusterer it runs (see Lanes.work): with spaces of their own, the
// clusterers taking turns in a lane each found theirs gone from the
// caches, and on gamma rays the reads of the matrix took 38 % of the time
// joining large groups, against 11 % sequentially.
type groupSpace struct {
	ref  []uint16 // index in the group of each pixel's last hit, valid where occ is set
	occ  []byte   // one bit per pixel, as the clusterer's
	tree groupTree
}

// newGroupSpace returns a space for c's sensor.
func newGroupSpace(c *Clusterer) *groupSpace {
	return &groupSpace{ref: make([]uint16, len(c.ref)), occ: make([]byte, len(c.occ))}
}

// space returns the group space to use: the one lent, else its own.
func (g *groupScratch) space(c *Clusterer) *groupSpace {
	if g.lent != nil {
		return g.lent
	}
	if g.own == nil {
		g.own = newGroupSpace(c)
	}
	return g.own
}

// groupMask masks an index into a group: the arrays of a groupTree have
// groupMax entries (below 1<<16, for groupSpace.ref), and an index masked
// with it needs no bounds check.
const groupMask = groupMax - 1

// groupTree is the union-find of clusterGroup over the hits of a group,
// whose root is the cluster's first hit, with the cluster's latest hit at
// each root and each hit's time beside it (copied as the hits are
// joined). Arrays of the largest group's size, so that lookups at hits
// read from the matrix need no bounds checks: 5 % faster on tracks.
type groupTree struct {
	parent, latest [groupMax]int32
	time           [groupMax]Time
}

// joinGroup joins the hits of an isolated group, in time order, into
// clusters on the matrix (as join does) and returns how many unions
// merged two clusters.
func (c *Clusterer) joinGroup(sp *groupSpace, xs, ys []uint16, ts []Time) int {
	ys, ts = ys[:len(xs)], ts[:len(xs)]
	parent, latest, times := &sp.tree.parent, &sp.tree.latest, &sp.tree.time
	ref, occ, offsets := sp.ref, sp.occ, &c.offsets
	stride, dt, def := uint32(c.stride), c.cfg.Dt, c.cfg.Definition
	merged := 0
	for q, x := range xs {
		t := ts[q]
		hit := int32(q) & groupMask
		times[hit] = t
		p := (uint32(ys[q])+1)*stride + uint32(x) + 1
		around := occupied3(occ, p-stride-1) | occupied3(occ, p-1)<<3 | occupied3(occ, p+stride-1)<<6
		root := hit
		// Once hits 0..q are one cluster (q unions), the rest of the
		// pixels around need no look (as in linkOpen).
		for ; around != 0 && merged < q; around &= around - 1 {
			nb := int32(ref[int32(p)+offsets[bits.TrailingZeros32(around)&15]]) & groupMask
			if parent[nb] == root { // already joined
				continue
			}
			var r int32
			if def == Local { // the neighbour itself must be within dt
				if !within(times[nb], t, dt) {
					continue
				}
				r = findIn(parent, nb)
			} else { // the cluster's latest (global) or first (window) hit
				r = findIn(parent, nb)
				open := times[latest[r]&groupMask]
				if def == Window {
					open = times[r]
				}
				if !within(open, t, dt) {
					continue
				}
			}
			if r != root { // the earlier root stays: it is the first hit
				a, b := min(r, root), max(r, root)
				parent[b&groupMask] = a
				root = a
				merged++
			}
		}
		parent[hit], latest[root&groupMask] = root, hit // in time order: q is the latest
		ref[p] = uint16(hit)
		occ[p>>3] |= 1 << (p & 7)
	}
	return merged
}

// joinGroupNear is joinGroup for a group (in time order) that spans at
// most dt: every two of its hits are within dt, so that under every
// definition hits on neighbouring pixels are joined, whatever their
// times. Without the times, each link is one chain of lookups shorter.
func (c *Clusterer) joinGroupNear(sp *groupSpace, xs, ys []uint16) int {
	ys = ys[:len(xs)]
	parent := &sp.tree.parent
	ref, occ, offsets := sp.ref, sp.occ, &c.offsets
	stride := uint32(c.stride)
	merged := 0
	for q, x := range xs {
		hit := int32(q) & groupMask
		p := (uint32(ys[q])+1)*stride + uint32(x) + 1
		around := occupied3(occ, p-stride-1) | occupied3(occ, p-1)<<3 | occupied3(occ, p+stride-1)<<6
		root := hit
		if around != 0 && merged == q-1 {
			// Hits 0..q-1 are one cluster, rooted at hit 0, and every hit
			// around is one of them: most hits of a track join without a
			// lookup.
			root = 0
			merged++
		}
		for ; around != 0 && merged < q; around &= around - 1 {
			nb := int32(ref[int32(p)+offsets[bits.TrailingZeros32(around)&15]]) & groupMask
			if parent[nb] == root { // already joined
				continue
			}
			if r := findIn(parent, nb); r != root {
				a, b := min(r, root), max(r, root)
				parent[b&groupMask] = a
				root = a
				merged++
			}
		}
		parent[hit] = root
		ref[p] = uint16(hit)
		occ[p>>3] |= 1 << (p & 7)
	}
	return merged
}

// findIn is find over a groupTree's parents. Most hits are at most two
// steps below their root: those two steps are taken without a branch on
// the way (whose direction would follow the data and mispredict: tracks
// 10-15 % faster), and j is then pointed at the root.
func findIn(parent *[groupMax]int32, j int32) int32 {
	j &= groupMask
	r := parent[parent[j]&groupMask] & groupMask
	if parent[r] == r {
		parent[j] = r
		return r
	}
	for {
		p := parent[j]
		if p == j {
			return j
		}
		gp := parent[p&groupMask]
		parent[j] = gp
		j = gp & groupMask
	}
}

// clusterGroup clusters the isolated group of hits [i, j) of h as join
// does, but without copying the hits into the buffer, on a group space
// (whose matrix points at hits of the group), which it gives back
// cleared. It writes the clusters to out from index k in the order of
// their first hits and returns the index after the last.
func (c *Clusterer) clusterGroup(out *Clusters, k int, h *Hits, i, j int) int {
	n := j - i
	g := &c.group
	sp := g.space(c)
	var merged int
	if h.ToA[j-1]-h.ToA[i] <= c.cfg.Dt { // most tracks: see joinGroupNear
		merged = c.joinGroupNear(sp, h.X[i:j], h.Y[i:j])
	} else {
		merged = c.joinGroup(sp, h.X[i:j], h.Y[i:j], h.ToA[i:j])
	}
	if merged == n-1 {
		c.groupSumsOne(sp, h, i, j)
	} else {
		c.groupSums(sp, h, i, j)
	}
	if !c.calibrated { // see clusterIsolated
		for s, q := range g.roots {
			*c.nextPending(c.nextSeq + int64(q)) = g.sums[s]
			k = c.addPending(out, k)
			if c.keepMembers {
				keepHits(out, h, i, g.members[g.start[s]:g.start[s+1]])
			}
		}
		return k
	}
	for s, q := range g.roots {
		e := c.extras(out, h, i, g.members[g.start[s]:g.start[s+1]])
		out.ID[k] = c.nextID
		out.store(k, c.nextSeq+int64(q), c.nextSeq+int64(q), &g.sums[s], e)
		c.nextID++
		k++
	}
	return k
}

// groupSums finds the clusters of the group [i, j) of h from the forest
// that clusterGroup built and clears the group's pixels: their roots in
// order, their sums, and when members or energies are kept, the hits of
// each cluster in time order.
func (c *Clusterer) groupSums(sp *groupSpace, h *Hits, i, j int) {
	n := j - i
	xs, ys, ts, tots := h.X[i:j], h.Y[i:j], h.ToA[i:j], h.ToT[i:j]
	ys, ts, tots = ys[:n], ts[:n], tots[:n]
	g := &c.group
	g.slot, g.sums = growLen(g.slot, n), growLen(g.sums, n)
	parent, slot, sums, roots := sp.tree.parent[:n], g.slot[:n], g.sums, g.roots[:0]
	occ, stride := sp.occ, uint32(c.stride)
	for q := range n {
		x, y := xs[q], ys[q]
		p := (uint32(y)+1)*stride + uint32(x) + 1
		occ[p>>3] = 0 // every pixel set is the group's: no read of the byte first
		if up := parent[q]; up != int32(q) {
			slot[q] = slot[up] // a parent comes before its child
			s := &sums[slot[q]]
			s.countAt(ts[q])
			s.addPixel(x, y, tots[q])
			continue
		}
		slot[q] = int32(len(roots))
		sums[len(roots)].start(x, y, ts[q], tots[q])
		roots = append(roots, int32(q))
	}
	g.roots = roots
	if !c.calibrated && !c.keepMembers {
		return
	}
	// The hits by cluster, each in time order: a counting sort by slot.
	g.start, g.members = growLen(g.start, len(roots)+1), growLen(g.members, n)
	start := g.start
	clear(start)
	for _, s := range slot {
		start[s+1]++
	}
	for s := range roots {
		start[s+1] += start[s]
	}
	next := sp.tree.latest[:len(roots)] // the forest is done with: scratch
	copy(next, start)
	for q, s := range slot {
		g.members[next[s]] = int32(q)
		next[s]++
	}
}

// groupSumsOne is groupSums for a group that is one cluster (three in
// five tracks): the hits summed in order into the cluster's sums, with no
// lookup of each hit's cluster.
func (c *Clusterer) groupSumsOne(sp *groupSpace, h *Hits, i, j int) {
	n := j - i
	xs, ys, ts, tots := h.X[i:j], h.Y[i:j], h.ToA[i:j], h.ToT[i:j]
	ys, ts, tots = ys[:n], ts[:n], tots[:n]
	occ, stride := sp.occ, uint32(c.stride)
	g := &c.group
	g.roots, g.sums = append(g.roots[:0], 0), growLen(g.sums, 1)
	s := &g.sums[0]
	s.start(xs[0], ys[0], ts[0], tots[0])
	for q, x := range xs {
		y := ys[q]
		p := (uint32(y)+1)*stride + uint32(x) + 1
		occ[p>>3] = 0 // every pixel set is the group's: no read of the byte first
		if q > 0 {
			s.addPixel(x, y, tots[q])
		}
	}
	s.size, s.last = int32(n), ts[n-1] // in time order: no need to compare

	if !c.calibrated && !c.keepMembers {
		return
	}
	g.start, g.members = append(g.start[:0], 0, int32(n)), growLen(g.members, n)
	for q := range g.members {
		g.members[q] = int32(q)
	}
}

// storeIsolated writes cluster k with the sums s, whose hits are those of
// h from index from at the bits of members, with its energies (the
// clusters without them wait in c.pend), and returns k+1.
func (c *Clusterer) storeIsolated(out *Clusters, k int, h *Hits, from int, s *hitSums, members uint16) int {
	var hits [isolatedMax]int32
	m := hits[:0]
	for ; members != 0; members &= members - 1 {
		m = append(m, int32(bits.TrailingZeros16(members)))
	}
	e := c.extras(out, h, from, m)
	root := c.nextSeq + int64(m[0])
	out.ID[k] = c.nextID
	out.store(k, root, root, s, e)
	c.nextID++
	return k + 1
}

// extras returns the energy sums of a cluster of calibrated hits, hits
// from+q of h for q in members (in time order), and appends them to the
// output's members when they are kept.
func (c *Clusterer) extras(out *Clusters, h *Hits, from int, members []int32) *energySums {
	c.energies = newEnergySums()
	for _, q := range members {
		j := from + int(q)
		var v float32
		if h.Calibrated() {
			v = h.E[j]
		}
		c.energies.add(h.X[j], h.Y[j], v)
	}
	if c.keepMembers {
		keepHits(out, h, from, members)
	}
	return &c.energies
}

// nextGap returns the first j in (i, end) where hit j comes more than dt
// after hit j-1, or end, and whether hits [i, j) are in time order.
func nextGap(h *Hits, i, end int, dt Time) (int, bool) {
	ts := h.ToA[:end]
	var down Time // the sign bit says whether a step went back
	for j := i + 1; j < len(ts); j++ {
		d := ts[j] - ts[j-1]
		if d > dt {
			return j, down >= 0
		}
		down |= d
	}
	return end, down >= 0
}
