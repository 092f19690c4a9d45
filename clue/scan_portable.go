//go:build !(goexperiment.simd && amd64)

package clue

func flatBox(g *grid, b box2D, xs, ys, w []float64, x, y, limit, firstLimit float64, near *[nearStride]int32) (float64, uint) {
	return flatBoxGo(g, b, xs, ys, w, x, y, limit, firstLimit, near)
}

func nearestBox(g *grid, b box2D, xs, ys, rho []float64, order []int32, x, y, limit, rhoI float64, idxI int32) nearest {
	return nearestBoxGo(g, b, xs, ys, rho, order, x, y, limit, rhoI, idxI)
}
