//go:build !(goexperiment.simd && amd64)

package jpet

func analyticValues(norm float64, a, b, n, col []float64) { analyticValuesGo(norm, a, b, n, col) }
