package jpet

import "math"

// KernelKind selects P(e | pixel).
type KernelKind uint8

// Kernels.
const (
	Analytic KernelKind = iota // the paper's analytic kernel (default)
	Gaussian                   // the plain Gaussian kernel
)

// kernel holds the per-event constants of P(e | pixel), the event's
// reconstructed point and the 3-sigma ellipse around it.
type kernel struct {
	y, z, tan, sec float64
	r              float64
	isz2, isdl2    float64 // 1/sigma_z^2, 1/sigma_dl^2
	norm           float64 // 1/(2 pi^2) sqrt(1/(sz^4 sdl^2))
	a, b, c        float64 // ellipse A*dy^2 + B*dy*dz + C*dz^2 <= 9
}

func newKernel(s Scanner, p Point) kernel {
	sec := math.Sqrt(1 + p.Tan*p.Tan)
	isz2, isdl2 := 1/(s.SigmaZ*s.SigmaZ), 1/(s.SigmaDL*s.SigmaDL)
	return kernel{
		y: p.Y, z: p.Z, tan: p.Tan, sec: sec, r: s.R, isz2: isz2, isdl2: isdl2,
		norm: 1 / (2 * math.Pi * math.Pi) * math.Sqrt(1/(s.SigmaZ*s.SigmaZ*s.SigmaZ*s.SigmaZ*s.SigmaDL*s.SigmaDL)),
		a:    4*sec*sec*isdl2 + 2*p.Tan*p.Tan*isz2,
		b:    -4 * p.Tan * isz2,
		c:    2 * isz2,
	}
}

// halfBox returns the half extents (in y and z) of the 3-sigma ellipse.
func (k *kernel) halfBox() (hy, hz float64) {
	hb := k.b / 2
	return 3 / math.Sqrt(k.a-hb*hb/k.c), 3 / math.Sqrt(k.c-hb*hb/k.a)
}

// inside reports whether the offset (dy, dz) lies in the 3-sigma ellipse.
func (k *kernel) inside(dy, dz float64) bool {
	return k.a*dy*dy+k.b*dy*dz+k.c*dz*dz <= 9
}

// value returns P(e | pixel) for the pixel at offset (dz, dy) from the
// event's point.
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
