package pixel

import (
	"errors"

	"github.com/hitflow/hitflow/internal/prefault"
)

// LongSpan is the most hits of the stream a cluster may span, from its
// first hit to its last, and keep its first hit's place in the output.
// Clusters come in the order of their first hits (by first ToA, in a
// time-ordered stream), except one spanning more (a hot pixel firing
// faster than dt, which never ends): that one comes in the place of its
// last hit. Otherwise every cluster starting while it is open would wait
// for it, and memory would grow with the stream; this way the clusters
// held back span at most LongSpan hits.
const LongSpan = 1 << 20

// outputKey is the place in the output of a cluster whose first and last
// hits have the given arrival numbers (see [LongSpan]). No two clusters
// share a key: it is the arrival number of one of their hits.
func outputKey(first, last, span int64) int64 {
	if last-first > span {
		return last
	}
	return first
}

// ErrNoMembers is the error of a writer of cluster hits given clusters
// that do not carry them (see [Clusterer.KeepMembers]).
var ErrNoMembers = errors.New("pixel: the clusters do not carry their hits")

// Clusters is a batch of finished clusters as structure of arrays, in the
// order they were emitted (by first ToA, see [LongSpan]). Weighted
// quantities use the energy when the hits were calibrated and the ToT
// otherwise.
type Clusters struct {
	ID         []int64   // running number from 0 in emission order
	root       []int64   // arrival number of the first hit
	key        []int64   // the output order (see outputKey)
	Size       []int32   // hits
	FirstToA   []Time    // earliest hit
	LastToA    []Time    // latest hit; the span is LastToA - FirstToA
	ToTSum     []int64   // sum of ToT in 25 ns ticks
	ESum       []float64 // sum of energies in keV (zero when uncalibrated)
	X, Y       []float64 // weighted centroid in pixels
	XMin, XMax []uint16  // bounding box, inclusive
	YMin, YMax []uint16
	Max        []float64 // largest pixel value (energy or ToT)
	Calibrated bool      // ESum, X, Y and Max come from energies

	// The morphology of each cluster, when computed (see package
	// pixel/analysis and HasShapes): distinct pixels, inner pixels,
	// roundness, linearity, length and width in pixels, and the class.
	Pixels, Inner                       []int32
	Roundness, Linearity, Length, Width []float64
	Class                               []uint8

	// The time of flight of each cluster, when computed (see package
	// pixel/analysis and HasTOF): its first ToA minus the latest
	// reference pulse before it, and that pulse's number from 0; Pulse
	// is -1 (and TOF 0) for a cluster before the first pulse.
	TOF   []Time
	Pulse []int64

	// Members holds the hits of every cluster when the clusterer keeps them
	// (see [Clusterer.KeepMembers]): cluster i owns Members[Start[i]:Start[i+1]],
	// in time order.
	Members Hits
	Start   []int
}

// Len returns the number of clusters.
func (c *Clusters) Len() int { return len(c.ID) }

// HasMembers reports whether the batch carries the hits of its clusters
// (see [Clusterer.KeepMembers]).
func (c *Clusters) HasMembers() bool { return len(c.Start) == c.Len()+1 }

// HasShapes reports whether the batch carries the morphology columns.
func (c *Clusters) HasShapes() bool { return len(c.Class) == c.Len() }

// HasTOF reports whether the batch carries the time-of-flight columns.
func (c *Clusters) HasTOF() bool { return len(c.Pulse) == c.Len() }

// Reset empties the batch, keeping its storage.
func (c *Clusters) Reset() {
	c.truncate(0)
	c.Members.Reset()
	c.Start = append(c.Start[:0], 0)
}

// Grow makes room for n more clusters in the feature columns, so that
// appending them (see Append) copies none of those before: for a reader
// that knows how many clusters a file holds. Large columns are made of
// huge pages (see internal/prefault): they are written whole.
func (c *Clusters) Grow(n int) {
	c.ID, c.root, c.key, c.Size, c.FirstToA, c.LastToA = prefault.Grow(c.ID, n), prefault.Grow(c.root, n), prefault.Grow(c.key, n), prefault.Grow(c.Size, n), prefault.Grow(c.FirstToA, n), prefault.Grow(c.LastToA, n)
	c.ToTSum, c.ESum, c.X, c.Y = prefault.Grow(c.ToTSum, n), prefault.Grow(c.ESum, n), prefault.Grow(c.X, n), prefault.Grow(c.Y, n)
	c.XMin, c.XMax, c.YMin, c.YMax = prefault.Grow(c.XMin, n), prefault.Grow(c.XMax, n), prefault.Grow(c.YMin, n), prefault.Grow(c.YMax, n)
	c.Max = prefault.Grow(c.Max, n)
}

// extend grows every feature column to length n.
func (c *Clusters) extend(n int) {
	c.ID, c.root, c.key, c.Size, c.FirstToA, c.LastToA = growLen(c.ID, n), growLen(c.root, n), growLen(c.key, n), growLen(c.Size, n), growLen(c.FirstToA, n), growLen(c.LastToA, n)
	c.ToTSum, c.ESum, c.X, c.Y = growLen(c.ToTSum, n), growLen(c.ESum, n), growLen(c.X, n), growLen(c.Y, n)
	c.XMin, c.XMax, c.YMin, c.YMax = growLen(c.XMin, n), growLen(c.XMax, n), growLen(c.YMin, n), growLen(c.YMax, n)
	c.Max = growLen(c.Max, n)
}

// truncate cuts every feature column to length n.
func (c *Clusters) truncate(n int) {
	c.ID, c.root, c.key, c.Size, c.FirstToA, c.LastToA = c.ID[:n], c.root[:n], c.key[:n], c.Size[:n], c.FirstToA[:n], c.LastToA[:n]
	c.ToTSum, c.ESum, c.X, c.Y = c.ToTSum[:n], c.ESum[:n], c.X[:n], c.Y[:n]
	c.XMin, c.XMax, c.YMin, c.YMax = c.XMin[:n], c.XMax[:n], c.YMin[:n], c.YMax[:n]
	c.Max = c.Max[:n]
	if len(c.Class) >= n {
		c.Pixels, c.Inner, c.Class = c.Pixels[:n], c.Inner[:n], c.Class[:n]
		c.Roundness, c.Linearity, c.Length, c.Width = c.Roundness[:n], c.Linearity[:n], c.Length[:n], c.Width[:n]
	}
	if len(c.Pulse) >= n {
		c.TOF, c.Pulse = c.TOF[:n], c.Pulse[:n]
	}
}

// slice returns clusters [i, j) of c as a batch sharing its storage,
// without members.
func (c *Clusters) slice(i, j int) Clusters {
	return Clusters{
		ID: c.ID[i:j], root: c.root[i:j], key: c.key[i:j], Size: c.Size[i:j], FirstToA: c.FirstToA[i:j], LastToA: c.LastToA[i:j],
		ToTSum: c.ToTSum[i:j], ESum: c.ESum[i:j], X: c.X[i:j], Y: c.Y[i:j],
		XMin: c.XMin[i:j], XMax: c.XMax[i:j], YMin: c.YMin[i:j], YMax: c.YMax[i:j],
		Max: c.Max[i:j], Calibrated: c.Calibrated, Start: []int{0},
	}
}

// appendFrom appends cluster i of src, members included when src has them.
func (c *Clusters) appendFrom(src *Clusters, i int) { c.appendRange(src, i, i+1) }

// appendRange appends clusters [i, j) of src, members included when src
// has them.
func (c *Clusters) appendRange(src *Clusters, i, j int) {
	at, hitAt := c.Len(), c.Members.Len()
	c.lengthen(j-i, src.memberHits(i, j), src.HasMembers(), src.Members.Calibrated())
	c.copyAt(at, hitAt, src, i, j)
	c.Calibrated = src.Calibrated
	if len(src.Class) >= j {
		c.Pixels, c.Inner, c.Class = append(c.Pixels, src.Pixels[i:j]...), append(c.Inner, src.Inner[i:j]...), append(c.Class, src.Class[i:j]...)
		c.Roundness, c.Linearity = append(c.Roundness, src.Roundness[i:j]...), append(c.Linearity, src.Linearity[i:j]...)
		c.Length, c.Width = append(c.Length, src.Length[i:j]...), append(c.Width, src.Width[i:j]...)
	}
	if len(src.Pulse) >= j {
		c.TOF, c.Pulse = append(c.TOF, src.TOF[i:j]...), append(c.Pulse, src.Pulse[i:j]...)
	}
}

// memberHits is the number of member hits of clusters [i, j) of c: 0
// when c does not carry them.
func (c *Clusters) memberHits(i, j int) int {
	if c.HasMembers() {
		return c.Start[j] - c.Start[i]
	}
	return 0
}

// lengthen adds n clusters to the feature columns, to be written (see
// copyAt), and with members, room for hits more member hits after those
// of the clusters before (with energies when calibrated).
func (c *Clusters) lengthen(n, hits int, members, calibrated bool) {
	at := c.Len()
	c.extend(at + n)
	if n > 0 && members {
		c.Start = growLen(c.Start, at+n+1)
		c.Start[at] = c.Members.Len()
		c.Members.lengthen(hits, calibrated)
	}
}

// copyAt writes clusters [i, j) of src over c's from cluster at on (ids
// included), and when src carries members, theirs over c's members from
// hit hitAt on, the start of cluster at. c must be long enough (see
// lengthen), and Start[at] already hitAt.
func (c *Clusters) copyAt(at, hitAt int, src *Clusters, i, j int) {
	if len(src.root) >= j {
		copy(c.root[at:], src.root[i:j])
		copy(c.key[at:], src.key[i:j])
	} else { // clusters built outside a clusterer, e.g. read from a file
		for k := at; k < at+j-i; k++ {
			c.root[k], c.key[k] = -1, -1
		}
	}
	copy(c.ID[at:], src.ID[i:j])
	copy(c.Size[at:], src.Size[i:j])
	copy(c.FirstToA[at:], src.FirstToA[i:j])
	copy(c.LastToA[at:], src.LastToA[i:j])
	copy(c.ToTSum[at:], src.ToTSum[i:j])
	copy(c.ESum[at:], src.ESum[i:j])
	copy(c.X[at:], src.X[i:j])
	copy(c.Y[at:], src.Y[i:j])
	copy(c.XMin[at:], src.XMin[i:j])
	copy(c.XMax[at:], src.XMax[i:j])
	copy(c.YMin[at:], src.YMin[i:j])
	copy(c.YMax[at:], src.YMax[i:j])
	copy(c.Max[at:], src.Max[i:j])
	if src.HasMembers() {
		from := src.Start[i]
		c.Members.copyAt(hitAt, &src.Members, from, src.Start[j])
		for k, s := range src.Start[i+1 : j+1] {
			c.Start[at+1+k] = s - from + hitAt
		}
	}
}

// Append appends every cluster of src, members included when src has them.
func (c *Clusters) Append(src *Clusters) { c.appendAll(src) }

// AppendSelected appends the clusters i of src for which keep[i] holds,
// in order, members included when src has them.
func (c *Clusters) AppendSelected(src *Clusters, keep []bool) {
	for i := 0; i < src.Len(); {
		if !keep[i] {
			i++
			continue
		}
		j := i + 1
		for j < src.Len() && keep[j] {
			j++
		}
		c.appendRange(src, i, j)
		i = j
	}
}

// appendAll appends every cluster of src.
func (c *Clusters) appendAll(src *Clusters) { c.appendRange(src, 0, src.Len()) }
