package textscan

import (
	"math"
	"math/big"
	"math/bits"
)

// negPow10 holds 10^-k for k = 1..22 as 128-bit mantissas, truncated,
// with the top bit set: 10^-k = (hi*2^64 + lo) * 2^exp (less the
// truncation).
var negPow10 = func() (t [23]struct {
	hi, lo uint64
	exp    int
}) {
	ten := big.NewInt(10)
	for k := 1; k < len(t); k++ {
		p := new(big.Int).Exp(ten, big.NewInt(int64(k)), nil)
		// floor(2^s / 10^k) with exactly 128 bits.
		s := 127 + p.BitLen()
		m := new(big.Int).Lsh(big.NewInt(1), uint(s))
		m.Quo(m, p)
		for m.BitLen() > 128 {
			s--
			m.Lsh(big.NewInt(1), uint(s)).Quo(m, p)
		}
		lo := new(big.Int).And(m, new(big.Int).SetUint64(math.MaxUint64))
		t[k].hi, t[k].lo, t[k].exp = new(big.Int).Rsh(m, 64).Uint64(), lo.Uint64(), -s
	}
	return t
}()

// lemire returns the float64 nearest to m * 10^-k (m > 0, 1 <= k <= 22)
// by the algorithm of Eisel and Lemire ("Number parsing at a gigabyte
// per second", 2021): the product of m with a 128-bit mantissa of 10^-k
// decides the 54 leading bits of the result unless it lies too near a
// rounding boundary, when ok is false and the caller asks strconv.
func lemire(m uint64, k int) (float64, bool) {
	p := &negPow10[k]
	lz := bits.LeadingZeros64(m)
	w := m << lz
	xHi, xLo := bits.Mul64(w, p.hi)
	// The low half of the power can carry into the bits that decide.
	if xHi&0x1ff == 0x1ff && xLo+w < xLo {
		yHi, yLo := bits.Mul64(w, p.lo)
		mergedHi, mergedLo := xHi, xLo+yHi
		if mergedLo < xLo {
			mergedHi++
		}
		if mergedHi&0x1ff == 0x1ff && mergedLo+1 == 0 && yLo+w < yLo {
			return 0, false
		}
		xHi, xLo = mergedHi, mergedLo
	}
	msb := xHi >> 63
	mant := xHi >> (msb + 9)
	// m * 10^-k ~ xHi * 2^(128 + exp - lz), and mant holds its 54 leading
	// bits: value = mant * 2^(137 + msb + exp - lz).
	e := 137 + int(msb) + p.exp - lz
	// A tie of two floats cannot be told from the truncated product.
	if xLo == 0 && xHi&0x1ff == 0 && mant&3 == 1 {
		return 0, false
	}
	mant += mant & 1 // round half to even on the 54th bit
	mant >>= 1
	e++
	if mant>>53 > 0 {
		mant >>= 1
		e++
	}
	// mant is in [2^52, 2^53): value = mant * 2^e, biased exponent
	// e + 52 + 1023; only normal floats here.
	biased := e + 52 + 1023
	if biased < 1 || biased > 2046 {
		return 0, false
	}
	return math.Float64frombits(uint64(biased)<<52 | mant&(1<<52-1)), true
}
