package textfmt

import (
	"encoding/binary"
	"math"
	"math/bits"
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
	t := s + 1
	// The three cases by selection rather than branches (whether a value
	// has 16 or 17 digits is as good as random): the closer of s and
	// s+1, ties to even; s or s+1 when only one lies in the interval;
	// and, before them, one digit fewer: a multiple of ten around s.
	cmp := int64(vb - (s+t)<<1)
	f = t - (b2u(cmp < 0) | b2u(cmp == 0)&^s&1)
	uin, win := vbl+out <= s<<2, t<<2+out <= vbr
	m := -b2u(uin != win)
	f = f&^m | (t-b2u(uin))&m
	sp := s / 10
	uin, win = vbl+out <= sp*10<<2, (sp+1)*10<<2+out <= vbr
	m = -b2u(uin != win)
	f = f&^m | (sp+1-b2u(uin))&m
	e = k + int(m&1)
	return trim(f, e)
}

// b2u is 1 for true, 0 for false, without a branch.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
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

// putShortest writes v, normal and finite, in strconv's shortest 'g'
// form at the start of b, which must have room for MaxFloatLen bytes,
// and returns its length: the digits of shortest, with an exponent below
// 10^-4 and from 10^6 on. The digits are written once, where the form
// wants them, and those before the point moved one byte down to make
// room for it.
func putShortest(b []byte, v float64) int {
	b = b[:MaxFloatLen]
	// The sign without a branch: half of the coordinates are negative,
	// in no order a predictor could learn.
	u := math.Float64bits(v)
	k := int(u >> 63)
	b[0] = '-'
	f, e := shortest(math.Float64frombits(u &^ (1 << 63)))
	// The digits go one byte up, where most forms want all but the first.
	var digits int
	if f >= 1e15 { // most computed values: no branch on 16 or 17 digits
		long := 0
		if f >= 1e16 {
			long = 1
		}
		digits = 16 + long
		put17(b[k+long:], f) // a 16-digit f's zero first lands on b[k], rewritten below
	} else {
		digits = putDigits(b[k+1:], f)
	}
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
	case exp < 0: // "0.", then zeros, then the digits, as words
		lead := 1 - exp
		w0, w1, w2 := binary.LittleEndian.Uint64(b[k+1:]), binary.LittleEndian.Uint64(b[k+9:]), binary.LittleEndian.Uint64(b[k+17:])
		binary.LittleEndian.PutUint64(b[k:], zeroPoint)
		binary.LittleEndian.PutUint64(b[k+lead:], w0)
		binary.LittleEndian.PutUint64(b[k+lead+8:], w1)
		binary.LittleEndian.PutUint64(b[k+lead+16:], w2)
		k += lead + digits
	case digits <= exp+1:
		copy(b[k:], b[k+1:k+1+digits])
		k += digits
		k += copy(b[k:], "00000"[:exp+1-digits])
	default: // exp in [0, 5]: the integral digits one byte down, as a word
		m := uint64(1)<<(8*uint(exp+1)) - 1
		w := binary.LittleEndian.Uint64(b[k+1:])&m | binary.LittleEndian.Uint64(b[k:])&^m
		binary.LittleEndian.PutUint64(b[k:], w)
		b[k+1+exp] = '.'
		k += digits + 1
	}
	return k
}

// zeroPoint is "0.000000" as a little-endian word.
const zeroPoint = 0x3030303030302E30

// put17 writes f, below 10^17, as 17 digits, zeros first: the first
// digit, then four table words, all by multiplications.
func put17(b []byte, f uint64) {
	hi := f / 1e8
	lo := f - hi*1e8
	top := hi / 1e8
	mid := hi - top*1e8
	mh, lh := mid/10000, lo/10000
	b = b[:17]
	b[0] = byte('0' + top)
	binary.LittleEndian.PutUint32(b[1:], quads[mh])
	binary.LittleEndian.PutUint32(b[5:], quads[mid-mh*10000])
	binary.LittleEndian.PutUint32(b[9:], quads[lh])
	binary.LittleEndian.PutUint32(b[13:], quads[lo-lh*10000])
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
