package pixel

import (
	"math"
	"math/bits"
)

// hitSums accumulates the features of one cluster with ToT weights, and
// energySums the energy-weighted ones. Every sum is exact: integers for
// ToT, 128-bit fixed point for energies. The features therefore do not
// depend on the order in which the hits are added, and every clustering
// mode, whatever order its unions took, gives the same bits.
type hitSums struct {
	size                   int32
	first, last            Time
	tot, tx, ty, sx, sy    int64 // ToT sum, ToT-weighted and plain position sums
	xmin, xmax, ymin, ymax uint16
	peak                   uint16
}

// start sets the sums to those of one hit. The sums are updated in place
// (not built and returned as values) because they are too large for
// registers: copies of them cost more than the sums.
func (s *hitSums) start(x, y uint16, t Time, tot uint16) {
	s.size, s.first, s.last = 1, t, t
	s.tot, s.tx, s.ty, s.sx, s.sy = int64(tot), int64(tot)*int64(x), int64(tot)*int64(y), int64(x), int64(y)
	s.xmin, s.xmax, s.ymin, s.ymax, s.peak = x, x, y, y, tot
}

// A hit is added in two calls, countAt and addPixel: one method doing both
// would be too large to be inlined.

// countAt adds a hit at time t to the size and the time span.
func (s *hitSums) countAt(t Time) {
	s.size++
	s.first, s.last = min(s.first, t), max(s.last, t)
}

// addPixel adds a hit's pixel and ToT to the position and ToT sums.
func (s *hitSums) addPixel(x, y uint16, tot uint16) {
	s.xmin, s.xmax, s.ymin, s.ymax = min(s.xmin, x), max(s.xmax, x), min(s.ymin, y), max(s.ymax, y)
	w := int64(tot)
	s.tot, s.tx, s.ty = s.tot+w, s.tx+w*int64(x), s.ty+w*int64(y)
	s.sx, s.sy = s.sx+int64(x), s.sy+int64(y)
	s.peak = max(s.peak, tot)
}

// merge adds the sums of o.
func (s *hitSums) merge(o *hitSums) {
	switch {
	case o.size == 0:
		return
	case s.size == 0:
		*s = *o
		return
	}
	s.size += o.size
	s.first, s.last = min(s.first, o.first), max(s.last, o.last)
	s.tot, s.tx, s.ty, s.sx, s.sy = s.tot+o.tot, s.tx+o.tx, s.ty+o.ty, s.sx+o.sx, s.sy+o.sy
	s.xmin, s.xmax, s.ymin, s.ymax = min(s.xmin, o.xmin), max(s.xmax, o.xmax), min(s.ymin, o.ymin), max(s.ymax, o.ymax)
	s.peak = max(s.peak, o.peak)
}

// foldedSums are the sums of hits that left a buffer before their cluster
// was emitted (see Clusterer.fold); the energies are zero where the stream
// was not calibrated yet, as in the buffer.
type foldedSums struct {
	s    hitSums
	e    energySums
	last int64 // the latest arrival number of the hits
}

func (f *foldedSums) add(x, y uint16, t Time, tot uint16, e float32, seq int64) {
	f.last = max(f.last, seq)
	if f.s.size == 0 {
		f.s.start(x, y, t, tot)
	} else {
		f.s.countAt(t)
		f.s.addPixel(x, y, tot)
	}
	f.e.add(x, y, e)
}

func (f *foldedSums) merge(o *foldedSums) {
	f.last = max(f.last, o.last)
	f.s.merge(&o.s)
	f.e.merge(&o.e)
}

// store writes the features of cluster k, whose first hit has arrival
// number root and whose output order is key (see outputKey): weighted by
// energy when e is not nil, else by ToT. A cluster without positive weight
// gets its plain centroid.
func (c *Clusters) store(k int, root, key int64, s *hitSums, e *energySums) {
	c.root[k], c.key[k], c.Size[k], c.FirstToA[k], c.LastToA[k], c.ToTSum[k] = root, key, s.size, s.first, s.last, s.tot
	c.XMin[k], c.XMax[k], c.YMin[k], c.YMax[k] = s.xmin, s.xmax, s.ymin, s.ymax
	w, wx, wy, sum, peak := float64(s.tot), float64(s.tx), float64(s.ty), 0.0, float64(s.peak)
	if e != nil {
		sum, peak = e.e.float(), e.peak
		w, wx, wy = sum, e.ex.float(), e.ey.float()
		sum /= energyScale
	}
	c.ESum[k], c.Max[k] = sum, peak
	c.X[k], c.Y[k] = s.centroid(w, wx, wy)
}

// centroid is the weighted centroid of the sums wx and wy over weight w,
// or the plain one of the cluster's pixels without positive weight.
func (s *hitSums) centroid(w, wx, wy float64) (x, y float64) {
	if w > 0 {
		return wx / w, wy / w
	}
	return float64(s.sx) / float64(s.size), float64(s.sy) / float64(s.size)
}

// storeRun writes the features of clusters k, k+1, ... with the sums of
// the same index, whose first hits (and output keys) are roots and whose
// ids run from id on: column by column, each a short run of stores
// rather than fifteen columns interleaved.
func (c *Clusters) storeRun(k int, id int64, roots []int64, sums []hitSums) {
	n := len(roots)
	sums = sums[:n]
	for i, r := range roots {
		c.ID[k+i], c.root[k+i], c.key[k+i] = id+int64(i), r, r
	}
	size, first, last, tot := c.Size[k:k+n], c.FirstToA[k:k+n], c.LastToA[k:k+n], c.ToTSum[k:k+n]
	for i := range sums {
		s := &sums[i]
		size[i], first[i], last[i], tot[i] = s.size, s.first, s.last, s.tot
	}
	xmin, xmax, ymin, ymax := c.XMin[k:k+n], c.XMax[k:k+n], c.YMin[k:k+n], c.YMax[k:k+n]
	for i := range sums {
		s := &sums[i]
		xmin[i], xmax[i], ymin[i], ymax[i] = s.xmin, s.xmax, s.ymin, s.ymax
	}
	esum, peak, x, y := c.ESum[k:k+n], c.Max[k:k+n], c.X[k:k+n], c.Y[k:k+n]
	for i := range sums {
		s := &sums[i]
		esum[i], peak[i] = 0, float64(s.peak)
		x[i], y[i] = s.centroid(float64(s.tot), float64(s.tx), float64(s.ty))
	}
}

// energySums accumulates energies in units of 2^-40 keV, up to MaxEnergy
// (2^62 units) each.
type energySums struct {
	e, ex, ey wide
	peak      float64
}

// energyScale makes every energy of 2^-17 keV or more an exact integer.
const energyScale = 0x1p40

func newEnergySums() energySums { return energySums{peak: math.Inf(-1)} }

func (s *energySums) add(x, y uint16, e float32) {
	// Out of range, the product would not fit int64: it would convert to
	// whatever the machine makes of it.
	ev := float64(e)
	if math.IsNaN(ev) {
		ev = 0
	}
	ev = min(max(ev, -MaxEnergy), MaxEnergy)
	v := int64(ev * energyScale)
	s.e.addMul(v, 1)
	s.ex.addMul(v, uint64(x))
	s.ey.addMul(v, uint64(y))
	s.peak = max(s.peak, ev)
}

func (s *energySums) merge(o *energySums) {
	s.e.add(o.e)
	s.ex.add(o.ex)
	s.ey.add(o.ey)
	s.peak = max(s.peak, o.peak)
}

// wide is a signed 128-bit integer.
type wide struct {
	hi int64
	lo uint64
}

// addMul adds v*m.
func (w *wide) addMul(v int64, m uint64) {
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	hi, lo := bits.Mul64(u, m)
	if v < 0 { // two's complement of the 128-bit product
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, borrow)
	}
	var carry uint64
	w.lo, carry = bits.Add64(w.lo, lo, 0)
	w.hi += int64(hi) + int64(carry)
}

func (w *wide) add(v wide) {
	var carry uint64
	w.lo, carry = bits.Add64(w.lo, v.lo, 0)
	w.hi += v.hi + int64(carry)
}

func (w wide) float() float64 { return float64(w.hi)*0x1p64 + float64(w.lo) }
