package clue

import "math"

// exp is e^x for the density kernels, by the method of fdlibm's exp:
// x = k ln2 + r with ln2 in two parts (so that r carries the bits the
// product with k would lose), e^r from a degree-5 minimax polynomial in
// r^2, and 2^k applied exactly. Every product is rounded on its own (the
// conversions forbid fused multiply-adds), so that it gives the same
// bits on every platform and in the device kernels (clue/cluecl, the
// same steps in OpenCL C); math.Exp, in assembly on amd64 and arm64,
// does not promise that. Its error is under one ulp.
func exp(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01 // the high 32 bits of ln 2
		ln2Lo     = 1.90821492927058770002e-10 // ln 2 - ln2Hi
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)
		// The minimax coefficients of R(t) = r(e^r+1)/(e^r-1) - 2,
		// t = r^2, on [0, (ln2/2)^2].
		p1 = 1.66666666666666019037e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	switch {
	case x != x:
		return x
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	k := 0
	if x < 0 {
		k = int(float64(log2e*x) - 0.5)
	} else {
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	r := hi - lo
	t := float64(r * r)
	poly := p4 + float64(t*p5)
	poly = p3 + float64(t*poly)
	poly = p2 + float64(t*poly)
	poly = p1 + float64(t*poly)
	c := r - float64(t*poly)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}
