//go:build !(goexperiment.simd && amd64)

package jpet

func keptDenominator(ks []float32, at int, runs []uint32, rs []float32) (float64, int) {
	return keptDenominatorGo(ks, at, runs, rs)
}

func keptAdd(ks []float32, at int, runs []uint32, inv float32, acc []float32) int {
	return keptAddGo(ks, at, runs, inv, acc)
}
