package clue

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestExp: within one ulp of e^x computed in 200 bits, over the kernels'
// range and beyond; the special values as math.Exp.
func TestExp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		x := (r.Float64()*2 - 1) * []float64{1e-9, 1, 30, 700}[r.IntN(4)]
		got, want := exp(x), bigExp(x)
		if math.Abs(got-want) > math.Nextafter(want, math.Inf(1))-want {
			t.Fatalf("exp(%v) = %v, want %v", x, got, want)
		}
	}
	for _, x := range []float64{0, math.Inf(1), math.Inf(-1), 710, -746, 1e-300} {
		if got, want := exp(x), math.Exp(x); got != want {
			t.Errorf("exp(%v) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(exp(math.NaN())) {
		t.Error("exp(NaN) is a number")
	}
}

// bigExp is e^x by its series in 200-bit arithmetic, rounded to float64.
func bigExp(x float64) float64 {
	const prec = 200
	// e^x = (e^(x/2^s))^(2^s), the series converging fast for |x/2^s| < 1.
	s := 12
	y := new(big.Float).SetPrec(prec).SetFloat64(x)
	y.Quo(y, new(big.Float).SetPrec(prec).SetInt64(1<<s))
	sum, term := new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 60; n++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(n))
		sum.Add(sum, term)
	}
	for range s {
		sum.Mul(sum, sum)
	}
	f, _ := sum.Float64()
	return f
}
