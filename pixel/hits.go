package pixel

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/internal/textfmt"
)

// Time is a hit time in units of 1/64 ns (15.625 ps). Every Timepix3 time
// (coarse 25 ns minus fine 1.5625 ns steps) is a whole number of units, so
// time arithmetic is exact; the range is about ±4.5 years.
type Time int64

// Time units.
const (
	Nanosecond  Time = 64
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// Ns returns t in nanoseconds. The conversion is exact.
func (t Time) Ns() float64 { return float64(t) / float64(Nanosecond) }

// TimeFromNs converts nanoseconds to Time, rounding to the nearest unit.
func TimeFromNs(ns float64) Time { return Time(math.Round(ns * float64(Nanosecond))) }

// AppendNs appends t in nanoseconds as its exact decimal: a Time is a
// 64th of a nanosecond, so at most six decimals, written by integer
// arithmetic (several times faster than formatting the float, which text
// outputs do for every hit and cluster). It reads back as the float
// t.Ns() for any time below 2^53 units (39 hours); below 2^32 ns (4.3 s)
// it is also that float's shortest decimal, beyond it has more digits
// than the shortest, which is not exact.
func AppendNs(dst []byte, t Time) []byte {
	l := len(dst)
	dst = slices.Grow(dst, MaxNsLen)
	return dst[:l+PutNs(dst[l:l+MaxNsLen], t)]
}

// MaxNsLen is the most bytes PutNs writes.
const MaxNsLen = textfmt.MaxLen + 8

// PutNs writes t as AppendNs does at the start of b, which must have room
// for MaxNsLen bytes, and returns how many bytes it wrote.
func PutNs(b []byte, t Time) int {
	q, r := t/Nanosecond, t%Nanosecond
	n := 0
	if t < 0 {
		if r == 0 {
			return textfmt.PutInt(b, int64(q))
		}
		b[0] = '-'
		n, q, r = 1, -q, -r
	}
	n += textfmt.PutUint(b[n:], uint64(q))
	if r == 0 {
		return n
	}
	f := &nsFractions[r]
	binary.LittleEndian.PutUint64(b[n:], f.text)
	return n + int(f.n)
}

// nsFractions are the decimals of the 64ths of a nanosecond, ".015625"
// to ".984375", as the bytes of a little-endian uint64 and their length:
// AppendNs writes them in one store.
var nsFractions = func() (t [Nanosecond]struct {
	text uint64
	n    uint8
}) {
	for r := range t {
		b := textfmt.AppendFraction(make([]byte, 0, 8), uint64(r), 6) // Nanosecond is 2^6
		t[r].n = uint8(len(b))
		t[r].text = binary.LittleEndian.Uint64(b[:8])
	}
	return t
}()

// Hits is a batch of hits as structure of arrays. X, Y, ToA and ToT always
// have the same length; E is either empty (uncalibrated) or of that length.
type Hits struct {
	X, Y []uint16
	ToA  []Time
	ToT  []uint16  // time over threshold in 25 ns ticks
	E    []float32 // energy in keV after calibration (within ±MaxEnergy), or empty
}

// MaxEnergy is the largest energy of a hit, in keV, that the clusters'
// sums hold exactly (see [Clusters]); energies beyond ±MaxEnergy count as
// ±MaxEnergy, and NaN as zero. A pixel of a Timepix3 sees at most a few
// MeV.
const MaxEnergy = 1 << 22

// Len returns the number of hits.
func (h *Hits) Len() int { return len(h.ToA) }

// Calibrated reports whether the batch carries energies.
func (h *Hits) Calibrated() bool { return len(h.E) != 0 && len(h.E) == len(h.ToA) }

// Reset empties the batch, keeping its storage.
func (h *Hits) Reset() {
	h.X, h.Y, h.ToA, h.ToT, h.E = h.X[:0], h.Y[:0], h.ToA[:0], h.ToT[:0], h.E[:0]
}

// Reserve makes room for n more hits without reallocation.
func (h *Hits) Reserve(n int) {
	h.X = grow(h.X, n)
	h.Y = grow(h.Y, n)
	h.ToA = grow(h.ToA, n)
	h.ToT = grow(h.ToT, n)
	if len(h.E) != 0 {
		h.E = grow(h.E, n)
	}
}

// Append adds one uncalibrated hit.
func (h *Hits) Append(x, y uint16, toa Time, tot uint16) {
	h.X = append(h.X, x)
	h.Y = append(h.Y, y)
	h.ToA = append(h.ToA, toa)
	h.ToT = append(h.ToT, tot)
}

// view returns hits [i, j) of h, sharing its storage.
func (h *Hits) view(i, j int) *Hits {
	v := &Hits{X: h.X[i:j], Y: h.Y[i:j], ToA: h.ToA[i:j], ToT: h.ToT[i:j]}
	if h.Calibrated() {
		v.E = h.E[i:j]
	}
	return v
}

// AppendFrom appends hit i of src.
func (h *Hits) AppendFrom(src *Hits, i int) { h.AppendRange(src, i, i+1) }

// AppendRange appends hits [i, j) of src. When only one side is calibrated,
// the missing energies are zero.
func (h *Hits) AppendRange(src *Hits, i, j int) {
	at := h.Len()
	h.lengthen(j-i, src.Calibrated())
	h.copyAt(at, src, i, j)
}

// lengthen adds n hits to h, to be written (see copyAt), with energies
// when h has them or calibrated says the new hits do: the hits already
// there then get zero.
func (h *Hits) lengthen(n int, calibrated bool) {
	old, hadE := h.Len(), h.Calibrated()
	m := old + n
	h.X, h.Y, h.ToA, h.ToT = growLen(h.X, m), growLen(h.Y, m), growLen(h.ToA, m), growLen(h.ToT, m)
	if calibrated && !hadE {
		h.E = growLen(h.E[:0], old)
		clear(h.E)
	}
	if calibrated || hadE {
		h.E = growLen(h.E, m)
	}
}

// copyAt writes hits [i, j) of src over h's hits from at on, energies
// included when h has them (zero where src has none).
func (h *Hits) copyAt(at int, src *Hits, i, j int) {
	copy(h.X[at:], src.X[i:j])
	copy(h.Y[at:], src.Y[i:j])
	copy(h.ToA[at:], src.ToA[i:j])
	copy(h.ToT[at:], src.ToT[i:j])
	switch {
	case !h.Calibrated():
	case src.Calibrated():
		copy(h.E[at:], src.E[i:j])
	default:
		clear(h.E[at : at+j-i])
	}
}

// gather appends the hits of src at the given indices, in that order.
func (h *Hits) gather(src *Hits, idx []int32) {
	hadE := h.Calibrated() // before the columns grow past the energies
	n0 := h.Len()
	n := n0 + len(idx)
	h.X, h.Y, h.ToA, h.ToT = growLen(h.X, n), growLen(h.Y, n), growLen(h.ToA, n), growLen(h.ToT, n)
	x, y, t, tot := h.X[n0:n], h.Y[n0:n], h.ToA[n0:n], h.ToT[n0:n]
	for k, i := range idx {
		x[k], y[k], t[k], tot[k] = src.X[i], src.Y[i], src.ToA[i], src.ToT[i]
	}
	if src.Calibrated() {
		if !hadE {
			h.E = append(h.E[:0], make([]float32, n0)...)
		}
		h.E = growLen(h.E, n)
		for k, i := range idx {
			h.E[n0+k] = src.E[i]
		}
	} else if len(h.E) != 0 {
		h.E = append(h.E, make([]float32, len(idx))...)
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	ns := make([]T, len(s), 2*cap(s)+n)
	copy(ns, s)
	return ns
}

// ParseTime reads a duration such as "200ns", "1.5625ns", "0.5us", "500µs",
// "2ms", "1s" or a bare "0" onto the Time grid (rounding below 1/64 ns).
func ParseTime(s string) (Time, error) {
	if s == "0" {
		return 0, nil
	}
	units := []struct {
		suffix string
		unit   Time
	}{{"ns", Nanosecond}, {"us", Microsecond}, {"µs", Microsecond}, {"ms", Millisecond}, {"s", Second}}
	for _, u := range units {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(v) || math.Abs(v*float64(u.unit)) > 1<<62 {
			break
		}
		return Time(math.Round(v * float64(u.unit))), nil
	}
	return 0, fmt.Errorf("pixel: %q is not a duration like 200ns, 0.5us, 500us, 2ms or 1s", s)
}
