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

// featureSum accumulates the features of one cluster. Every sum is exact:
// integers for ToT weights, 128-bit fixed point for energies. The features
// therefore do not depend on the order in which the hits are added, and
// every clustering mode, whatever order its unions took, gives the same
// bits.
type featureSum struct {
	size                   int32
	first, last            Time
	totSum, tx, ty, sx, sy int64 // ToT-weighted and plain position sums
	e, ex, ey              wide  // energy and energy-weighted sums, 2^-40 keV
	xmin, xmax, ymin, ymax uint16
	peak                   float64
}

// energyScale makes every energy of 2^-17 keV or more an exact integer.
const energyScale = 0x1p40

func newFeatureSum() featureSum {
	return featureSum{first: math.MaxInt64, last: math.MinInt64, xmin: math.MaxUint16, ymin: math.MaxUint16, peak: math.Inf(-1)}
}

// add takes one hit; e is ignored unless calibrated.
func (s *featureSum) add(x, y uint16, t Time, tot uint16, e float32, calibrated bool) {
	s.size++
	s.first, s.last = min(s.first, t), max(s.last, t)
	s.xmin, s.xmax, s.ymin, s.ymax = min(s.xmin, x), max(s.xmax, x), min(s.ymin, y), max(s.ymax, y)
	s.sx, s.sy = s.sx+int64(x), s.sy+int64(y)
	s.totSum += int64(tot)
	if calibrated {
		v := int64(float64(e) * energyScale)
		s.e.addMul(v, 1)
		s.ex.addMul(v, uint64(x))
		s.ey.addMul(v, uint64(y))
		s.peak = max(s.peak, float64(e))
		return
	}
	s.tx, s.ty = s.tx+int64(tot)*int64(x), s.ty+int64(tot)*int64(y)
	s.peak = max(s.peak, float64(tot))
}

// result returns the features. A cluster without positive weight gets its
// plain centroid.
func (s *featureSum) result(calibrated bool) features {
	f := features{size: s.size, first: s.first, last: s.last, totSum: s.totSum,
		xmin: s.xmin, xmax: s.xmax, ymin: s.ymin, ymax: s.ymax, max: s.peak}
	w, wx, wy := float64(s.totSum), float64(s.tx), float64(s.ty)
	if calibrated {
		w, wx, wy = s.e.float(), s.ex.float(), s.ey.float()
		f.eSum = w / energyScale
	}
	if w <= 0 {
		w, wx, wy = float64(s.size), float64(s.sx), float64(s.sy)
	}
	f.x, f.y = wx/w, wy/w
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
