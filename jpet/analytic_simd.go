//go:build goexperiment.simd && amd64

package jpet

import (
	"math"
	"simd/archsimd"
)

// analyticValues is analyticValuesGo four pixels at a time, with a vector
// exp (expVec); the last, partial step runs the portable code. Results
// agree with the portable ones to a few ulps.
func analyticValues(norm float64, a, b, n, col []float64) {
	q := 0
	if haveAVX2 {
		a, b, n = a[:len(col)], b[:len(col)], n[:len(col)]
		vnorm, half := archsimd.BroadcastFloat64x4(norm), archsimd.BroadcastFloat64x4(-0.5)
		for ; q+4 <= len(col); q += 4 {
			va := archsimd.LoadFloat64x4((*[4]float64)(a[q : q+4]))
			vb := archsimd.LoadFloat64x4((*[4]float64)(b[q : q+4]))
			vn := archsimd.LoadFloat64x4((*[4]float64)(n[q : q+4]))
			e := half.Mul(va.Sub(vb.Mul(vb).Div(vn)))
			vnorm.Div(vn.Sqrt()).Mul(expVec(e)).Store((*[4]float64)(col[q : q+4]))
		}
		archsimd.ClearAVXUpperBits()
	}
	analyticValuesGo(norm, a[q:], b[q:], n[q:], col[q:])
}

// Constants of expVec: ln 2 split so that k*ln2Hi is exact for |k| < 2^11
// (Cody and Waite), and 1.5*2^52, whose addition rounds to an integer
// held in the low bits of the sum.
const (
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
	round = 1.5 * (1 << 52)
)

// expVec is exp for arguments in [-708, 708] (the kernel's are at most a
// few tens below 0; others are clamped to that range): x = k ln2 + r with
// |r| <= ln2/2, exp(r) by its Taylor series to r^13 (truncation below
// 5e-18), times 2^k built in the exponent bits.
func expVec(x archsimd.Float64x4) archsimd.Float64x4 {
	x = x.Max(archsimd.BroadcastFloat64x4(-708)).Min(archsimd.BroadcastFloat64x4(708))
	t := x.Mul(archsimd.BroadcastFloat64x4(math.Log2E)).Add(archsimd.BroadcastFloat64x4(round))
	k := t.Sub(archsimd.BroadcastFloat64x4(round))
	r := x.Sub(k.Mul(archsimd.BroadcastFloat64x4(ln2Hi))).Sub(k.Mul(archsimd.BroadcastFloat64x4(ln2Lo)))
	p := archsimd.BroadcastFloat64x4(expCoef[len(expCoef)-1])
	for i := len(expCoef) - 2; i >= 0; i-- {
		p = p.Mul(r).Add(archsimd.BroadcastFloat64x4(expCoef[i]))
	}
	scale := t.AsInt64x4().Add(archsimd.BroadcastInt64x4(1023)).ShiftAllLeft(52).AsFloat64x4()
	return p.Mul(scale)
}

// expCoef are 1/i! for i = 0..13.
var expCoef = func() (c [14]float64) {
	f := 1.0
	for i := range c {
		if i > 0 {
			f *= float64(i)
		}
		c[i] = 1 / f
	}
	return c
}()
