//go:build goexperiment.simd && amd64

package jpet

import (
	"math"
	"math/rand/v2"
	"simd/archsimd"
	"testing"
)

// TestExpVec: the vector exp against math.Exp to 1e-15 relative (a few
// ulps) over the kernel's range and beyond, at the ends of the range
// and at multiples of ln 2 (where the reduction changes k).
func TestExpVec(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var xs []float64
	for range 100000 {
		xs = append(xs, -60*r.Float64(), 1400*r.Float64()-700)
	}
	for k := -1000; k <= 1000; k++ {
		x := float64(k) * math.Ln2
		xs = append(xs, x, math.Nextafter(x, 0), math.Nextafter(x, -1000), x+math.Ln2/2, x-math.Ln2/2)
	}
	xs = append(xs, 0, -0.0, 1e-300, -1e-300, -708, 708, -707.9, 707.9)
	for len(xs)%4 != 0 {
		xs = append(xs, 0)
	}
	for i := 0; i < len(xs); i += 4 {
		var got [4]float64
		expVec(archsimd.LoadFloat64x4((*[4]float64)(xs[i : i+4]))).Store(&got)
		archsimd.ClearAVXUpperBits()
		for j, g := range got {
			x := xs[i+j]
			if x < -708 || x > 708 {
				continue
			}
			if want := math.Exp(x); math.Abs(g-want) > 1e-15*want {
				t.Fatalf("exp(%v) = %v, want %v (%.3g relative)", x, g, want, (g-want)/want)
			}
		}
	}
}
