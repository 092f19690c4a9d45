package jpet

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Options configure a reconstruction.
type Options struct {
	Kernel      KernelKind
	Sensitivity bool // weigh the denominator by the pixel sensitivity
	// AuthorsBox reproduces the authors' loop: the box of each event runs
	// from its first corner inclusive to its last corner exclusive, so it
	// misses its own last row and column and the image's last row and
	// column are never visited. Off by default.
	AuthorsBox bool
	Workers    int // 0: GOMAXPROCS
}

// prepared is an event's constants for every iteration.
type prepared struct {
	k              kernel
	z0, z1, y0, y1 int // pixel box [z0, z1) x [y0, y1)
}

// Reconstructor runs list-mode MLEM iterations over a fixed set of events.
type Reconstructor struct {
	s       Scanner
	opt     Options
	events  []prepared
	rho     []float64
	sens    []float64
	acc     [][]float64 // per worker
	caches  [][]contribution
	workers int
}

type contribution struct {
	pix int32
	v   float64 // kernel times rho
}

// NewReconstructor prepares the events. The image starts at 1 everywhere.
func NewReconstructor(s Scanner, events []Event, opt Options) (*Reconstructor, error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if opt.Kernel > Gaussian {
		return nil, fmt.Errorf("jpet: unknown kernel %d", opt.Kernel)
	}
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	r := &Reconstructor{s: s, opt: opt, workers: w, rho: make([]float64, s.NZ*s.NY)}
	for i := range r.rho {
		r.rho[i] = 1
	}
	if opt.Sensitivity {
		r.sens = make([]float64, len(r.rho))
		for iy := range s.NY {
			for iz := range s.NZ {
				r.sens[iy*s.NZ+iz] = s.PixelSensitivity(iz, iy)
			}
		}
	}
	zLeft, yTop := -float64(s.NZ)*s.Pixel/2, float64(s.NY)*s.Pixel/2
	r.events = make([]prepared, len(events))
	for i, e := range events {
		p := s.Reconstruct(e)
		k := newKernel(s, p)
		hy, hz := k.halfBox()
		iz, iy := int((p.Z-zLeft)/s.Pixel), int((yTop-p.Y)/s.Pixel)
		dz, dy := int(hz/s.Pixel+0.5), int(hy/s.Pixel+0.5)
		clamp := func(v, n int) int { return min(max(v, 0), n-1) }
		pe := prepared{k: k, z0: clamp(iz-dz, s.NZ), z1: clamp(iz+dz, s.NZ), y0: clamp(iy-dy, s.NY), y1: clamp(iy+dy, s.NY)}
		if !opt.AuthorsBox {
			pe.z1++
			pe.y1++
		}
		r.events[i] = pe
	}
	r.acc = make([][]float64, w)
	r.caches = make([][]contribution, w)
	for i := range r.acc {
		r.acc[i] = make([]float64, len(r.rho))
	}
	return r, nil
}

// Image returns the current image, row-major, row 0 at +y; valid until the
// next iteration.
func (r *Reconstructor) Image() []float64 { return r.rho }

// Scanner returns the geometry with the image size filled in.
func (r *Reconstructor) Scanner() Scanner { return r.s }

// Iterate runs one MLEM iteration. Events are split into one contiguous
// block per worker and the workers' images are summed in worker order, so
// the result is deterministic for a given number of workers.
func (r *Reconstructor) Iterate() {
	w := r.workers
	var wg sync.WaitGroup
	for id := range w {
		lo, hi := id*len(r.events)/w, (id+1)*len(r.events)/w
		wg.Go(func() { r.caches[id] = r.accumulate(r.events[lo:hi], r.acc[id], r.caches[id]) })
	}
	wg.Wait()
	for p := range r.rho {
		var sum float64
		for id := range w {
			sum += r.acc[id][p]
			r.acc[id][p] = 0
		}
		r.rho[p] = sum
	}
}

// accumulate adds the events' contributions to acc: per event a first
// pass over the ellipse computes the denominator (and keeps the kernel
// values), a second adds kernel*rho/denominator to each pixel. The ellipse
// is walked row by row over exactly the pixels whose centres it contains,
// with the kernel's row constants computed once per row; the Gaussian
// kernel's exponent is a quadratic in the pixel offset, so along a row it
// is stepped with two multiplications per pixel instead of an exp.
func (r *Reconstructor) accumulate(events []prepared, acc []float64, cache []contribution) []contribution {
	s := r.s
	rho, sens := r.rho, r.sens
	gaussian := r.opt.Kernel == Gaussian
	p := s.Pixel
	zFirst := -float64(s.NZ)*p/2 + p/2 // centre of column 0
	yFirst := float64(s.NY)*p/2 - p/2  // centre of row 0
	for i := range events {
		e := &events[i]
		k := &e.k
		cache = cache[:0]
		var denom float64
		sec2 := k.sec * k.sec
		ratio := math.Exp(-2 * k.isz2 * p * p) // of consecutive Gaussian steps
		for iy := e.y0; iy < e.y1; iy++ {
			yc := yFirst - float64(iy)*p
			dy := yc - k.y
			lo, hi, ok := k.rowSpan(dy, zFirst, p, e.z0, e.z1)
			if !ok {
				continue
			}
			row := iy * s.NZ
			// Row constants: a and o depend on the row only, b on the
			// column through b1 = dz - dy*tan.
			Y := yc
			a1, a2, a3 := -(Y-k.r)*sec2, -(Y+k.r)*sec2, -2*Y*k.sec*k.tan
			b3 := -2 * dy * k.sec
			aCa := (a1*a1+a2*a2)*k.isz2 + a3*a3*k.isdl2
			b3C := b3 * b3 * k.isdl2
			dz0 := zFirst + float64(lo)*p - k.z
			b1 := dz0 - dy*k.tan
			// The Gaussian: K = norm/sqrt(aCa) * exp(-isz2*b1^2 - b3C/2),
			// stepped as b1 += p. The analytic kernel: n = n0 + n1*b1,
			// bCa = m0 + m1*b1, bCb = 2*isz2*b1^2 + b3C.
			var g, step, n0, n1, m0, m1 float64
			if gaussian {
				g = k.norm / math.Sqrt(aCa) * math.Exp(-k.isz2*b1*b1-0.5*b3C)
				step = math.Exp(-k.isz2 * (2*b1*p + p*p))
			} else {
				o1, o2, o3 := a1*k.tan, a2*k.tan, -Y*k.sec*(1+2*k.tan*k.tan)
				n0, n1 = aCa+2*o3*b3*k.isdl2, 2*(o1+o2)*k.isz2
				m0, m1 = a3*b3*k.isdl2, (a1+a2)*k.isz2
			}
			for iz := lo; iz <= hi; iz++ {
				var kv float64
				if gaussian {
					kv = g
					g *= step
					step *= ratio
				} else {
					n := n0 + n1*b1
					bCa := m0 + m1*b1
					kv = k.norm / math.Sqrt(n) * math.Exp(-0.5*(2*k.isz2*b1*b1+b3C-bCa*bCa/n))
					b1 += p
				}
				pix := row + iz
				v := kv * rho[pix]
				cache = append(cache, contribution{int32(pix), v})
				if sens != nil {
					v *= sens[pix]
				}
				denom += v
			}
		}
		if denom == 0 {
			continue
		}
		inv := 1 / denom
		for _, c := range cache {
			acc[c.pix] += c.v * inv
		}
	}
	return cache
}

// rowSpan returns the columns [lo, hi] within [z0, z1) of the pixels on a
// row at offset dy whose centres lie in the ellipse: the analytic interval,
// widened by one pixel and trimmed with the exact test, so that the set is
// the one a pixel-by-pixel test gives.
func (k *kernel) rowSpan(dy, zFirst, p float64, z0, z1 int) (lo, hi int, ok bool) {
	disc := k.b*k.b*dy*dy - 4*k.c*(k.a*dy*dy-9)
	centre := k.z - k.b*dy/(2*k.c) - zFirst // in z from column 0's centre
	half := math.Sqrt(max(disc, 0)) / (2 * k.c)
	lo = max(z0, int(math.Ceil((centre-half)/p)))
	hi = min(z1-1, int(math.Floor((centre+half)/p)))
	dzOf := zFirst - k.z
	// Rounding can put an end one pixel off either way: fix it with the
	// exact test.
	if lo > z0 && k.inside(dy, dzOf+float64(lo-1)*p) {
		lo--
	} else if lo <= hi && !k.inside(dy, dzOf+float64(lo)*p) {
		lo++
	}
	if hi < z1-1 && k.inside(dy, dzOf+float64(hi+1)*p) {
		hi++
	} else if hi >= lo && !k.inside(dy, dzOf+float64(hi)*p) {
		hi--
	}
	if disc < 0 && lo > hi { // the row may still touch at the vertex
		c := min(max(int(math.Round(centre/p)), z0), z1-1)
		if k.inside(dy, dzOf+float64(c)*p) {
			return c, c, true
		}
	}
	return lo, hi, lo <= hi
}
