package jpet

import (
	"fmt"
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
// values), a second adds kernel*rho/denominator to each pixel.
func (r *Reconstructor) accumulate(events []prepared, acc []float64, cache []contribution) []contribution {
	s := r.s
	rho, sens := r.rho, r.sens
	kind := r.opt.Kernel
	for i := range events {
		e := &events[i]
		k := &e.k
		cache = cache[:0]
		var denom float64
		for iy := e.y0; iy < e.y1; iy++ {
			for iz := e.z0; iz < e.z1; iz++ {
				zc, yc := s.PixelCentre(iz, iy)
				dz, dy := zc-k.z, yc-k.y
				if !k.inside(dy, dz) {
					continue
				}
				pix := iy*s.NZ + iz
				v := k.value(kind, dz, dy) * rho[pix]
				cache = append(cache, contribution{int32(pix), v})
				if sens != nil {
					denom += v * sens[pix]
				} else {
					denom += v
				}
			}
		}
		if denom == 0 {
			continue
		}
		for _, c := range cache {
			acc[c.pix] += c.v / denom
		}
	}
	return cache
}
