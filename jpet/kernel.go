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
	isz2, isdl2, norm := s.KernelConstants()
	return kernel{
		y: p.Y, z: p.Z, tan: p.Tan, sec: sec, r: s.R, isz2: isz2, isdl2: isdl2, norm: norm,
		a: 4*sec*sec*isdl2 + 2*p.Tan*p.Tan*isz2,
		b: -4 * p.Tan * isz2,
		c: 2 * isz2,
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

// analyticValuesGo is analyticValues with the math package:
// col[q] = norm / sqrt(n[q]) * exp(-0.5 * (a[q] - b[q]^2 / n[q])), the
// analytic kernel with a = bCb, b = bCa.
func analyticValuesGo(norm float64, a, b, n, col []float64) {
	a, b, n = a[:len(col)], b[:len(col)], n[:len(col)]
	for q := range col {
		col[q] = norm / math.Sqrt(n[q]) * math.Exp(-0.5*(a[q]-b[q]*b[q]/n[q]))
	}
}
