package pixel

import (
	"math"
	"math/bits"
)

// features of one cluster, as in [Clusters].
type features struct {
	size                   int32
	first, last            Time
	totSum                 int64
	eSum, x, y             float64
	xmin, xmax, ymin, ymax uint16
	max                    float64
}

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

// newHitSums starts the sums with one hit.
func newHitSums(x, y uint16, t Time, tot uint16) hitSums {
	return hitSums{1, t, t, int64(tot), int64(tot) * int64(x), int64(tot) * int64(y), int64(x), int64(y), x, x, y, y, tot}
}

func (s *hitSums) add(x, y uint16, t Time, tot uint16) {
	s.size++
	s.first, s.last = min(s.first, t), max(s.last, t)
	s.xmin, s.xmax, s.ymin, s.ymax = min(s.xmin, x), max(s.xmax, x), min(s.ymin, y), max(s.ymax, y)
	s.tot += int64(tot)
	s.tx, s.ty = s.tx+int64(tot)*int64(x), s.ty+int64(tot)*int64(y)
	s.sx, s.sy = s.sx+int64(x), s.sy+int64(y)
	s.peak = max(s.peak, tot)
}

// result returns the ToT-weighted features. A cluster without positive
// weight gets its plain centroid.
func (s *hitSums) result() features {
	f := features{size: s.size, first: s.first, last: s.last, totSum: s.tot,
		xmin: s.xmin, xmax: s.xmax, ymin: s.ymin, ymax: s.ymax, max: float64(s.peak)}
	if s.tot > 0 {
		f.x, f.y = float64(s.tx)/float64(s.tot), float64(s.ty)/float64(s.tot)
	} else {
		f.x, f.y = float64(s.sx)/float64(s.size), float64(s.sy)/float64(s.size)
	}
	return f
}

// energySums accumulates energies in units of 2^-40 keV.
type energySums struct {
	e, ex, ey wide
	peak      float64
}

// energyScale makes every energy of 2^-17 keV or more an exact integer.
const energyScale = 0x1p40

func newEnergySums() energySums { return energySums{peak: math.Inf(-1)} }

func (s *energySums) add(x, y uint16, e float32) {
	v := int64(float64(e) * energyScale)
	s.e.addMul(v, 1)
	s.ex.addMul(v, uint64(x))
	s.ey.addMul(v, uint64(y))
	s.peak = max(s.peak, float64(e))
}

// result returns the energy-weighted features, the rest from h.
func (s *energySums) result(h *hitSums) features {
	f := h.result()
	w := s.e.float()
	f.eSum, f.max = w/energyScale, s.peak
	if w > 0 {
		f.x, f.y = s.ex.float()/w, s.ey.float()/w
	} else {
		f.x, f.y = float64(h.sx)/float64(h.size), float64(h.sy)/float64(h.size)
	}
	return f
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

func (w wide) float() float64 { return float64(w.hi)*0x1p64 + float64(w.lo) }
