//go:build goexperiment.simd && amd64

package jpet

import "simd/archsimd"

var haveAVX2 = archsimd.X86.AVX2()

// Each function clears the upper halves of the vector registers before it
// returns: Go's scalar floating point uses SSE encodings, and mixing them
// with dirty upper halves costs a state transition per instruction on
// some processors.

// runMasks[n] are the masks of the values of a run of n in its two
// vectors of eight (indexed by five bits, so without a bounds check).
var runMasks = func() (m [1 << runLenBits][2][8]int32) {
	for n := range maxRun + 1 {
		for q := range n {
			m[n][q/8][q%8] = -1
		}
	}
	return m
}()

// A run is at most two vectors of eight values; those past its end are
// masked to zero, so they add nothing to the lanes nor to the pixels past
// the run (ks, rs and acc have keptPad values after their end). Masked
// loads and stores are not used: AMD processors run a masked store as
// microcode, many times slower than a plain one.

// keptDenominator is keptDenominatorGo eight values at a time: lanes 0-7
// and 8-15 of the portable sums are two vectors.
func keptDenominator(ks []float32, at int, runs []uint32, rs []float32) (float64, int) {
	if !haveAVX2 {
		return keptDenominatorGo(ks, at, runs, rs)
	}
	var lo, hi archsimd.Float32x8
	j := at
	for _, r := range runs {
		pix, n := unpackRun(r)
		m := &runMasks[n]
		lo = lo.Add(load8(ks, j).AsInt32x8().And(archsimd.LoadInt32x8(&m[0])).AsFloat32x8().Mul(load8(rs, pix)))
		if n > 8 {
			hi = hi.Add(load8(ks, j+8).AsInt32x8().And(archsimd.LoadInt32x8(&m[1])).AsFloat32x8().Mul(load8(rs, pix+8)))
		}
		j += n
	}
	var l [16]float32
	lo.StoreSlice(l[:8])
	hi.StoreSlice(l[8:])
	archsimd.ClearAVXUpperBits()
	return inverse(&l), j
}

// keptAdd is keptAddGo eight values at a time.
func keptAdd(ks []float32, at int, runs []uint32, inv float32, acc []float32) int {
	if !haveAVX2 {
		return keptAddGo(ks, at, runs, inv, acc)
	}
	vinv := archsimd.BroadcastFloat32x8(inv)
	j := at
	for _, r := range runs {
		pix, n := unpackRun(r)
		m := &runMasks[n]
		a := (*[8]float32)(acc[pix : pix+8])
		archsimd.LoadFloat32x8(a).Add(load8(ks, j).AsInt32x8().And(archsimd.LoadInt32x8(&m[0])).AsFloat32x8().Mul(vinv)).Store(a)
		if n > 8 {
			a := (*[8]float32)(acc[pix+8 : pix+16])
			archsimd.LoadFloat32x8(a).Add(load8(ks, j+8).AsInt32x8().And(archsimd.LoadInt32x8(&m[1])).AsFloat32x8().Mul(vinv)).Store(a)
		}
		j += n
	}
	archsimd.ClearAVXUpperBits()
	return j
}

// load8 loads s[i:i+8] with a single bounds check.
func load8(s []float32, i int) archsimd.Float32x8 {
	return archsimd.LoadFloat32x8((*[8]float32)(s[i : i+8]))
}
