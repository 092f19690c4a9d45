package jpet

import "math"

// value is P(e | pixel) for the pixel at offset (dz, dy) from the event's
// point, written as the reference page gives it: the plain twin of the
// column-wise evaluation in accumulate.
func (k *kernel) value(kind KernelKind, dz, dy float64) float64 {
	Y := dy + k.y
	sec2 := k.sec * k.sec
	a1, a2, a3 := -(Y-k.r)*sec2, -(Y+k.r)*sec2, -2*Y*k.sec*k.tan
	b1 := dz - dy*k.tan
	b3 := -2 * dy * k.sec
	dot := func(u1, u2, u3, v1, v2, v3 float64) float64 { return (u1*v1+u2*v2)*k.isz2 + u3*v3*k.isdl2 }
	aCa := dot(a1, a2, a3, a1, a2, a3)
	bCb := dot(b1, b1, b3, b1, b1, b3)
	if kind == Gaussian {
		return k.norm / math.Sqrt(aCa) * math.Exp(-0.5*bCb)
	}
	o1, o2, o3 := a1*k.tan, a2*k.tan, -Y*k.sec*(1+2*k.tan*k.tan)
	n := aCa + 2*dot(o1, o2, o3, b1, b1, b3)
	bCa := dot(b1, b1, b3, a1, a2, a3)
	return k.norm / math.Sqrt(n) * math.Exp(-0.5*(bCb-bCa*bCa/n))
}
