package clue

import (
	"math"
	"math/big"
)

// fsum is the correctly rounded sum of xs: Shewchuk's exact partials (as
// Python's math.fsum), cross-checked against big.Float in TestFsum.
func fsum(xs []float64) float64 {
	var partials []float64
	for _, x := range xs {
		i := 0
		for _, y := range partials {
			if math.Abs(x) < math.Abs(y) {
				x, y = y, x
			}
			hi := x + y
			lo := y - (hi - x)
			if lo != 0 {
				partials[i] = lo
				i++
			}
			x = hi
		}
		partials = append(partials[:i], x)
	}
	// Round the exact sum of the partials once, as math.fsum does.
	n := len(partials)
	if n == 0 {
		return 0
	}
	hi := partials[n-1]
	lo := 0.0
	for n--; n > 0; {
		x, y := hi, partials[n-1]
		n--
		hi = x + y
		yr := hi - x
		lo = y - yr
		if lo != 0 {
			break
		}
	}
	if n > 0 && (lo < 0 && partials[n-1] < 0 || lo > 0 && partials[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if yr := x - hi; y == yr {
			hi = x
		}
	}
	return hi
}

// exactSum is the slow, obvious twin of fsum.
func exactSum(xs []float64) float64 {
	s, t := new(big.Float).SetPrec(4096), new(big.Float)
	for _, x := range xs {
		s.Add(s, t.SetFloat64(x))
	}
	f, _ := s.Float64()
	return f
}

// reference is CLUE written directly from the semantics in the package
// documentation: quadratic, no grid, exact sums with big.Float, follower
// chains resolved by walking them.
func reference(pts *Points, p Params) *Result {
	n := pts.Len()
	layer := func(i int) int32 {
		if len(pts.Layer) == 0 {
			return 0
		}
		return pts.Layer[i]
	}
	dist := func(i, j int) float64 {
		var d2 float64
		for d := range pts.Coords {
			dx := pts.Coords[d][j] - pts.Coords[d][i]
			d2 += float64(dx * dx)
		}
		return math.Sqrt(d2)
	}
	// The kernels' exponential is the package's (checked against 200-bit
	// arithmetic in TestExp): part of the definition, for every platform
	// and device to agree on the bits.
	chi := func(d float64) float64 {
		k := p.Kernel
		switch k.Kind {
		case CMS:
			return 0.5
		case Gaussian:
			return k.Amp * exp(-d*d/(2*k.Param*k.Param))
		case Exponential:
			return k.Amp * exp(-k.Param*d)
		}
		return 1
	}
	r := &Result{Rho: make([]float64, n), Delta: make([]float64, n), NH: make([]int32, n), IsSeed: make([]bool, n), ClusterID: make([]int32, n)}
	var terms []float64
	for i := range n {
		terms = terms[:0]
		for j := range n {
			if layer(j) != layer(i) {
				continue
			}
			d := dist(i, j)
			if d > p.DC {
				continue
			}
			term := pts.Weight[j]
			if j != i {
				term = chi(d) * pts.Weight[j]
			}
			terms = append(terms, term)
		}
		r.Rho[i] = fsum(terms)
	}
	dm := math.Max(p.DeltaC, p.DeltaO)
	kind := make([]uint8, n)
	for i := range n {
		r.NH[i], r.Delta[i] = -1, math.Inf(1)
		for j := range n {
			higher := r.Rho[j] > r.Rho[i] || r.Rho[j] == r.Rho[i] && j > i
			if layer(j) != layer(i) || !higher {
				continue
			}
			d := dist(i, j)
			if d > dm {
				continue
			}
			b := r.NH[i]
			if b < 0 || d < r.Delta[i] || d == r.Delta[i] && (r.Rho[j] > r.Rho[b] || r.Rho[j] == r.Rho[b] && int32(j) < b) {
				r.NH[i], r.Delta[i] = int32(j), d
			}
		}
		switch {
		case r.Delta[i] > p.DeltaC && r.Rho[i] >= p.RhoC:
			kind[i] = seed
			r.IsSeed[i] = true
		case r.Delta[i] > p.DeltaO && r.Rho[i] < p.RhoC:
			kind[i] = outlier
		}
	}
	for i := range n {
		r.ClusterID[i] = -2 // unresolved
	}
	for i := range n {
		if kind[i] == seed {
			r.ClusterID[i] = int32(r.Clusters)
			r.Clusters++
		}
	}
	var resolve func(i int) int32
	resolve = func(i int) int32 {
		if r.ClusterID[i] != -2 {
			return r.ClusterID[i]
		}
		if kind[i] == outlier {
			r.ClusterID[i] = -1
		} else {
			r.ClusterID[i] = resolve(int(r.NH[i]))
		}
		return r.ClusterID[i]
	}
	for i := range n {
		if resolve(i) < 0 {
			r.Outliers++
		}
	}
	return r
}
