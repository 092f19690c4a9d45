// Package textfmt writes numbers as decimal text, with the digits strconv
// gives, several times faster: strconv formats into a buffer of its own
// and copies it over, and divides digit by digit; textfmt writes four
// digits at a time from a table, in place.
//
// The Append functions grow the slice as append does. The Put functions
// write at the start of b, which must have room for MaxLen bytes
// (MaxFloatLen for PutFloat), and return how many they wrote: a writer of rows reserves room for a whole
// row once and writes its fields without a check per number.
package textfmt

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// MaxLen is the most bytes a Put function writes: a 64-bit integer with
// its sign, or a number of PutFixed.
const MaxLen = 24

// quads holds the four decimal digits of 0 to 9999, zero-padded, as the
// bytes of a little-endian uint32: one load and one store write them.
var quads = func() (q [10000]uint32) {
	for v := range q {
		d := [4]byte{byte('0' + v/1000), byte('0' + v/100%10), byte('0' + v/10%10), byte('0' + v%10)}
		q[v] = binary.LittleEndian.Uint32(d[:])
	}
	return q
}()

// smalls holds the digits of 0 to 9999 without leading zeros, as the
// bytes of a little-endian uint32 in the low half of each word, and
// their count in the high half.
var smalls = func() (q [10000]uint64) {
	for v := range q {
		n := 1
		for p := 10; p <= v && n < 4; p *= 10 {
			n++
		}
		q[v] = uint64(quads[v]>>(8*(4-n))) | uint64(n)<<32
	}
	return q
}()

// pow10f holds the powers of ten PutFixed scales by as floats: converting
// a uint64 to float64 takes a branch and several instructions on amd64.
var pow10f = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// PutUint writes v in decimal, as strconv.AppendUint(nil, v, 10).
func PutUint(b []byte, v uint64) int {
	if v < 10000 { // most numbers of a hit or cluster row
		return putSmall(b, v)
	}
	return putLarge(b, v)
}

// putSmall writes v below 10000 with one load and one store.
func putSmall(b []byte, v uint64) int {
	w := smalls[v]
	binary.LittleEndian.PutUint32(b, uint32(w))
	return int(w >> 32)
}

// putLarge writes v from 10000 on: the last eight digits as two table
// words, the ones before them as PutUint writes them.
func putLarge(b []byte, v uint64) int {
	if v < 1e8 {
		hi := v / 10000
		n := putSmall(b, hi)
		binary.LittleEndian.PutUint32(b[n:], quads[v-hi*10000])
		return n + 4
	}
	top := v / 1e8
	n := PutUint(b, top)
	low := v - top*1e8
	hi := low / 10000
	binary.LittleEndian.PutUint32(b[n:], quads[hi])
	binary.LittleEndian.PutUint32(b[n+4:], quads[low-hi*10000])
	return n + 8
}

// putPadded writes v as the len(b) digits of b, zero-padded on the left.
func putPadded(b []byte, v uint64) {
	i := len(b)
	for ; i >= 4; i -= 4 {
		q := v / 10000
		binary.LittleEndian.PutUint32(b[i-4:], quads[v-q*10000])
		v = q
	}
	for ; i > 0; i-- {
		q := v / 10
		b[i-1] = byte('0' + v - q*10)
		v = q
	}
}

// PutInt writes v in decimal, as strconv.AppendInt(nil, v, 10).
func PutInt(b []byte, v int64) int {
	if v >= 0 {
		return PutUint(b, uint64(v))
	}
	b[0] = '-'
	return 1 + PutUint(b[1:], -uint64(v))
}

// PutFixed writes v rounded to the given number of decimals (at most 8),
// without trailing zeros after the point, nor the point for a whole
// number: 12.5, 3.1416, 7. From 10^(18-decimals) on, and for NaN and
// infinities, it writes the shortest decimal that reads back as v, as
// strconv does (at most MaxLen bytes). The rounding is that of v times
// 10^decimals in float64, within one unit of the last place of the
// correctly rounded decimal: for columns whose precision is far finer
// than what they measure.
func PutFixed(b []byte, v float64, decimals int) int {
	scale := pow10[decimals]
	a := math.Abs(v) * pow10f[decimals]
	if !(a < 1e18) {
		return copy(b, strconv.AppendFloat(b[:0:len(b)], v, 'g', -1, 64))
	}
	n := 0
	if v < 0 && a >= 0.5 { // no "-0"
		b[0] = '-'
		n = 1
	}
	// Below 10^18 the conversions go through int64, one instruction on
	// amd64 where uint64's take a branch.
	if v == math.Trunc(v) { // a ToT, a single pixel's centroid
		return n + PutUint(b[n:], uint64(int64(math.Abs(v))))
	}
	q := uint64(int64(math.Round(a)))
	var whole uint64
	if decimals == 4 { // the common case: a constant divisor, a multiplication
		whole = q / 1e4
	} else {
		whole = q / scale
	}
	n += PutUint(b[n:], whole)
	return n + putFraction(b[n:], q-whole*scale, decimals)
}

// putFraction writes "." and f as a fraction of the given number of
// decimals, trailing zeros left out; nothing when f is 0.
func putFraction(b []byte, f uint64, decimals int) int {
	if f == 0 {
		return 0
	}
	b[0] = '.'
	if decimals == 4 { // the common case, in one store
		w := quads[f]
		binary.LittleEndian.PutUint32(b[1:], w)
		// The trailing zeros are the high bytes of w that are '0'.
		return 5 - bits.LeadingZeros32(w^0x30303030)/8
	}
	for f%10 == 0 {
		f /= 10
		decimals--
	}
	putPadded(b[1:1+decimals], f)
	return 1 + decimals
}

// AppendUint appends v in decimal, as strconv.AppendUint(dst, v, 10).
func AppendUint(dst []byte, v uint64) []byte {
	l := len(dst)
	dst = slices.Grow(dst, MaxLen)
	return dst[:l+PutUint(dst[l:l+MaxLen], v)]
}

// AppendInt appends v in decimal, as strconv.AppendInt(dst, v, 10).
func AppendInt(dst []byte, v int64) []byte {
	l := len(dst)
	dst = slices.Grow(dst, MaxLen)
	return dst[:l+PutInt(dst[l:l+MaxLen], v)]
}

// AppendFixed appends v as PutFixed writes it.
func AppendFixed(dst []byte, v float64, decimals int) []byte {
	l := len(dst)
	dst = slices.Grow(dst, MaxLen)
	return dst[:l+PutFixed(dst[l:l+MaxLen], v, decimals)]
}

// AppendFraction appends the decimals of the fraction num/2^log2den, num
// below 2^log2den and log2den at most 16 (exact in as many decimals), with
// a point, and without trailing zeros; nothing when num is 0.
func AppendFraction(dst []byte, num uint64, log2den int) []byte {
	l := len(dst)
	dst = slices.Grow(dst, MaxLen)
	// num/2^k = num*5^k/10^k.
	return dst[:l+putFraction(dst[l:l+MaxLen], num*pow5[log2den], log2den)]
}

var pow5 = [...]uint64{1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125, 9765625,
	48828125, 244140625, 1220703125, 6103515625, 30517578125, 152587890625}

// MaxFloatLen is the room PutFloat needs at the start of b: its longest
// text has 24 bytes, but it writes digits a word at a time past them.
const MaxFloatLen = 32

// AppendFloat appends the shortest decimal that reads back as v, as
// strconv.AppendFloat(dst, v, 'g', -1, 64).
func AppendFloat(dst []byte, v float64) []byte {
	l := len(dst)
	dst = slices.Grow(dst, MaxFloatLen)
	return dst[:l+PutFloat(dst[l:l+MaxFloatLen], v)]
}

// PutFloat writes v as AppendFloat appends it at the start of b, which
// must have room for MaxFloatLen bytes, and returns how many bytes it
// wrote. Whole numbers below a million (ToT sums and maxima, centroids of
// single pixels, densities of whole weights) take the integer path,
// which gives the same digits several times faster; other normal numbers
// take shortest, written in place; the rest (zeros, subnormals, NaN,
// infinities) strconv.
func PutFloat(b []byte, v float64) int {
	if v == math.Trunc(v) && math.Abs(v) < 1e6 && (v != 0 || !math.Signbit(v)) {
		return PutInt(b, int64(v))
	}
	if a := math.Abs(v); a >= 0x1p-1022 && a <= math.MaxFloat64 {
		return putShortest(b, v)
	}
	return copy(b, strconv.AppendFloat(b[:0:len(b)], v, 'g', -1, 64))
}
