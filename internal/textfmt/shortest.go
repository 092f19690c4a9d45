package textfmt

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// shortest returns the shortest decimal f * 10^e that reads back as the
// normal, positive, finite v, the closest to v of those (ties to an even
// f), with f free of trailing zeros: the digits strconv's shortest form
// gives. It is Giulietti's Schubfach ("The Schubfach way to render
// doubles", 2020): the rounding interval of v is scaled by a power of
// ten to about 17 digits with one 126-bit multiplication per end, and
// the shortest decimal is either that scale's integer or the multiple of
// ten next to it, with fewer multiplications than strconv's Ryu.
func shortest(v float64) (f uint64, e int) {
	u := math.Float64bits(v)
	be := int(u>>52) & 0x7FF
	c := 1<<52 | u&(1<<52-1)
	q := be - 1075
	// Whole numbers below 2^53: an interval narrower than 1 holds no
	// other decimal of as few digits.
	if -q > 0 && -q < 53 {
		if f := c >> -q; f<<-q == c {
			return trim(f, 0)
		}
	}
	cb := c << 2
	cbl, cbr := cb-2, cb+2
	var k int
	if c != 1<<52 || be == 1 {
		k = floorLog10Pow2(q)
	} else { // a power of two: the interval below is half as wide
		cbl = cb - 1
		k = floorLog10ThreeQuartersPow2(q)
	}
	h := q + floorLog2Pow10(-k) + 2
	g := &pow10Inverse[k-minPow10Inverse]
	vb, vbl, vbr := roundOdd(g, cb<<h), roundOdd(g, cbl<<h), roundOdd(g, cbr<<h)
	out := c & 1 // the interval's ends are in it when c is even
	s := vb >> 2
	// One digit fewer: the multiples of ten around s.
	sp := s / 10 * 10
	tp := sp + 10
	if uin, win := vbl+out <= sp<<2, tp<<2+out <= vbr; uin != win {
		if uin {
			return trim(sp, k)
		}
		return trim(tp, k)
	}
	t := s + 1
	uin, win := vbl+out <= s<<2, t<<2+out <= vbr
	if uin != win {
		if uin {
			return trim(s, k)
		}
		return trim(t, k)
	}
	// Both s and s+1 lie in the interval: the closer, ties to even.
	if cmp := int64(vb - (s+t)<<1); cmp < 0 || cmp == 0 && s&1 == 0 {
		return trim(s, k)
	}
	return trim(t, k)
}

// trim takes the trailing zeros of f * 10^e into e.
func trim(f uint64, e int) (uint64, int) {
	for f%10 == 0 {
		f /= 10
		e++
	}
	return f, e
}

// roundOdd is the 190-bit product cp * g shifted down by 127 bits, its
// lowest bit set when any bit shifted out was (rounding to odd keeps
// the comparisons with the interval's ends exact).
func roundOdd(g *[2]uint64, cp uint64) uint64 {
	x1, _ := bits.Mul64(g[1], cp)
	y1, y0 := bits.Mul64(g[0], cp)
	z := y0>>1 + x1
	return y1 + z>>63 | (z&(1<<63-1)+(1<<63-1))>>63
}

// floorLog10Pow2 is floor(q * log10(2)) for the exponents of float64
// (q from -1100 to 1000 checked by TestFloorLogs), and the next two
// likewise.
func floorLog10Pow2(q int) int { return q * 661971961083 >> 41 }

// floorLog10ThreeQuartersPow2 is floor(log10(3/4 * 2^q)).
func floorLog10ThreeQuartersPow2(q int) int { return (q*661971961083 - 274743187321) >> 41 }

// floorLog2Pow10 is floor(e * log2(10)) (e from -330 to 330 checked).
func floorLog2Pow10(e int) int { return e * 913124641741 >> 38 }

// appendShortest appends v, normal and finite, in strconv's shortest 'g'
// form: the digits of shortest, with an exponent below 10^-4 and from
// 10^6 on. The digits are written once, where the form wants them, and
// those before the point moved one byte down to make room for it.
func appendShortest(dst []byte, v float64) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 32) // -d.(16 digits)e-308
	b := dst[n : n+32]
	k := 0
	if v < 0 {
		b[0] = '-'
		k, v = 1, -v
	}
	f, e := shortest(v)
	// The digits go one byte up, where most forms want all but the first.
	digits := putDigits(b[k+1:], f)
	switch exp := e + digits - 1; { // of the first digit
	case exp < -4 || exp >= 6:
		b[k] = b[k+1]
		if digits > 1 {
			b[k+1] = '.'
			k += digits + 1
		} else {
			k++
		}
		b[k], b[k+1] = 'e', '+'
		if exp < 0 {
			b[k+1], exp = '-', -exp
		}
		k += 2
		if exp < 10 {
			b[k] = '0'
			k++
		}
		k += putSmall(b[k:], uint64(exp))
	case exp < 0:
		lead := 1 - exp // "0.", then zeros
		copy(b[k+lead:], b[k+1:k+1+digits])
		k += copy(b[k:], "0.0000"[:lead]) + digits
	case digits <= exp+1:
		copy(b[k:], b[k+1:k+1+digits])
		k += digits
		k += copy(b[k:], "00000"[:exp+1-digits])
	default:
		copy(b[k:], b[k+1:k+2+exp])
		b[k+1+exp] = '.'
		k += digits + 1
	}
	return dst[:n+k]
}

// putDigits writes f, below 10^17, as PutUint does: its length from its
// bit length, then the digits from the end four at a time, the two
// halves of eight apart so that their divisions overlap.
func putDigits(b []byte, f uint64) int {
	n := bits.Len64(f) * 1233 >> 12 // floor(log10(2^bits)): n or n+1 digits
	if f >= pow10[n] {
		n++
	}
	if n <= 8 {
		putPadded(b[:n], f)
		return n
	}
	hi := f / 1e8
	lo := f - hi*1e8
	putPadded(b[:n-8], hi)
	q := lo / 10000
	binary.LittleEndian.PutUint32(b[n-8:], quads[q])
	binary.LittleEndian.PutUint32(b[n-4:], quads[lo-q*10000])
	return n
}
