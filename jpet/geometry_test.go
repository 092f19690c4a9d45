package jpet

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.17g, want %.17g (rel %.2g)", what, got, want, math.Abs(got-want)/math.Abs(want))
	}
}

func TestConversions(t *testing.T) {
	s := Scanner{R: 450}
	e := s.Project(Point{Z: 20, Y: 10, Tan: math.Tan(7 * math.Pi / 180)})
	near(t, "z_u", e.ZU, 74.02520679727803, 1e-12)
	near(t, "z_d", e.ZD, -36.480898015336116, 1e-12)
	near(t, "dl", e.DL, -20.15019650917697, 1e-12)
	r := rand.New(rand.NewPCG(1, 1))
	for range 10000 {
		p := Point{Z: r.Float64()*800 - 400, Y: r.Float64()*800 - 400, Tan: math.Tan((r.Float64() - 0.5) * 1.5)}
		q := s.Reconstruct(s.Project(p))
		if math.Abs(q.Z-p.Z) > 1e-9 || math.Abs(q.Y-p.Y) > 1e-9 || math.Abs(q.Tan-p.Tan) > 1e-12 {
			t.Fatalf("round trip %+v -> %+v", p, q)
		}
	}
}

func TestSensitivity(t *testing.T) {
	s := Scanner{R: 500, L: 1000}
	for _, tc := range []struct{ z, y, want float64 }{
		{0, 0, 0.5}, {50, 0, 0.46652458328685176}, {-50, 100, 0.4410019151324715}, {-450, -200, 0.07526632771111386},
	} {
		near(t, "sensitivity", s.Sensitivity(tc.z, tc.y), tc.want, 1e-12)
	}
	// Symmetric in z and in y, positive, at most 1/2 at the centre line.
	r := rand.New(rand.NewPCG(2, 2))
	for range 10000 {
		z, y := (r.Float64()-0.5)*999, (r.Float64()-0.5)*999
		v := s.Sensitivity(z, y)
		if v <= 0 || v > 0.5+1e-12 || math.Abs(v-s.Sensitivity(-z, y)) > 1e-12 || math.Abs(v-s.Sensitivity(z, -y)) > 1e-12 {
			t.Fatalf("sensitivity(%v, %v) = %v", z, y, v)
		}
	}
}

func TestKernelValues(t *testing.T) {
	s := Scanner{R: 0.35, SigmaZ: 0.01, SigmaDL: 0.04}
	for _, tc := range []struct {
		kind         KernelKind
		angle, y     float64
		dz, dy, want float64
	}{
		{Gaussian, math.Pi / 6, 0.1, 0, 0, 184.304974530866},
		{Gaussian, math.Pi / 6, 0.1, 0.05, 0.1, 5.272096361578383e-6},
		{Gaussian, math.Pi / 6, 0.1, -0.05, -0.05, 0.0338473429952690},
		{Gaussian, math.Pi / 4, -0.3, 0, 0, 95.87658397191050},
		{Gaussian, math.Pi / 4, -0.3, -0.05, -0.05, 0.1719727908599724},
		{Analytic, math.Pi / 6, 0.1, 0.05, 0.1, 8.851462841389158e-06},
		{Analytic, math.Pi / 4, -0.3, -0.05, -0.05, 0.20599468781946895},
	} {
		k := newKernel(s, Point{Y: tc.y, Tan: math.Tan(tc.angle)})
		near(t, "kernel", k.value(tc.kind, tc.dz, tc.dy), tc.want, 1e-9)
	}
}

func TestKernelProperties(t *testing.T) {
	s := Scanner{R: 0.35, SigmaZ: 0.01, SigmaDL: 0.04}
	r := rand.New(rand.NewPCG(3, 3))
	for range 20000 {
		p := Point{Y: (r.Float64() - 0.5) * 0.6, Tan: math.Tan((r.Float64() - 0.5) * 1.5)}
		k := newKernel(s, p)
		hy, hz := k.halfBox()
		dz, dy := (r.Float64()-0.5)*3*hz, (r.Float64()-0.5)*3*hy
		for _, kind := range []KernelKind{Gaussian, Analytic} {
			if v := k.value(kind, dz, dy); !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("%v kernel %v at %+v (%v, %v)", kind, v, p, dz, dy)
			}
		}
		// The Gaussian kernel is a quadratic form in the offset for fixed
		// Y: symmetric under dz -> -dz, dy -> -dy only through b, so test
		// the part that must be: b flips sign, the exponent does not.
		k0 := newKernel(s, Point{Y: p.Y, Tan: p.Tan})
		g1 := k0.value(Gaussian, dz, 0)
		g2 := k0.value(Gaussian, -dz, 0)
		if math.Abs(g1-g2) > 1e-9*g1 {
			t.Fatalf("gaussian not symmetric in dz: %v %v", g1, g2)
		}
		// Points inside the ellipse lie inside its bounding box, and the
		// box's extreme points are on the ellipse.
		if k.inside(dy, dz) && (math.Abs(dy) > hy*(1+1e-12) || math.Abs(dz) > hz*(1+1e-12)) {
			t.Fatalf("inside the ellipse but outside the box: %v %v vs %v %v", dy, dz, hy, hz)
		}
		// At dy = hy the ellipse touches the box at dz = -B*dy/(2C).
		if q := k.a*hy*hy + k.b*hy*(-k.b*hy/(2*k.c)) + k.c*math.Pow(k.b*hy/(2*k.c), 2); math.Abs(q-9) > 1e-9 {
			t.Fatalf("box edge not on the ellipse: %v", q)
		}
	}
}

func TestBoundingBox(t *testing.T) {
	s := Scanner{R: 1, SigmaZ: 10, SigmaDL: 63}
	k := newKernel(s, Point{Tan: math.Tan(0.0470448)})
	hy, hz := k.halfBox()
	near(t, "bb_y", hy, 94.3954, 1e-5)
	near(t, "bb_z", hz, 21.6737, 1e-5)
}

func TestPixelGrid(t *testing.T) {
	s := PaperScanner().WithDefaults()
	if s.NZ != 75 || s.NY != 63 {
		t.Fatalf("image %dx%d", s.NZ, s.NY)
	}
	z, y := s.PixelCentre(0, 0)
	near(t, "z0", z, -0.148, 1e-12)
	near(t, "y0", y, 0.124, 1e-12)
}
