package jpet

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/hitflow/hitflow/internal/prefault"
)

// Options configure a reconstruction; see [Options.Validate].
type Options struct {
	Kernel      KernelKind
	Sensitivity bool // weigh the denominator by the pixel sensitivity
	// AuthorsBox reproduces the authors' loop: the box of each event runs
	// from its first corner inclusive to its last corner exclusive, so it
	// misses its own last row and column and the image's last row and
	// column are never visited. Off by default.
	AuthorsBox bool
	Workers    int // 0: GOMAXPROCS
	// KernelCache is how many bytes the reconstruction may keep kernel
	// values in (a float32 per pixel of an event, about 4.3 bytes with
	// the column runs that locate them: 1 GB for 10^6 events of the
	// paper's set-up), so that iterations after the first read them
	// instead of computing them; events beyond the budget are computed
	// every time. 0 keeps none. Kept values are used in float32 (see
	// kept.go); images agree with computed ones to 1e-5 after four
	// iterations (TestKernelCache).
	KernelCache int64
	// Progress, when set, is called during an iteration with the number
	// of its events done so far, after each block of events, one call at
	// a time.
	Progress func(done int)
}

// prepared is an event's constants for every iteration.
type prepared struct {
	k              kernel
	z0, z1, y0, y1 int // pixel box [z0, z1) x [y0, y1)
}

// Reconstructor runs list-mode MLEM iterations over a fixed set of events.
type Reconstructor struct {
	s        Scanner
	opt      Options
	events   []prepared
	rho      []float64 // column-major, see at
	img      []float64 // row-major copy returned by Image
	sens     []float64
	acc      [][]float64 // per worker
	caches   [][]contribution
	rows     []rowConsts
	stores   []kernelStore
	kept     keptIterations
	workers  int
	iterated bool // the first iteration has run: the kept events are read

	progressMu sync.Mutex
	done       int // events of the current iteration done
}

// progressBlock is how many computed events a worker runs between
// progress reports.
const progressBlock = 8192

func (r *Reconstructor) report(events int) {
	if r.opt.Progress == nil || events == 0 {
		return
	}
	r.progressMu.Lock()
	r.done += events
	r.opt.Progress(r.done)
	r.progressMu.Unlock()
}

type contribution struct {
	pix int32
	k   float64 // kernel value
}

// NewReconstructor prepares the events. The image starts at 1 everywhere.
func NewReconstructor(s Scanner, events []Event, opt Options) (*Reconstructor, error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
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
				r.sens[r.at(iz, iy)] = s.PixelSensitivity(iz, iy)
			}
		}
	}
	r.events = prefault.Make[prepared](len(events), 0)
	for i, e := range events {
		r.events[i] = s.prepare(e, opt.AuthorsBox)
	}
	r.acc = make([][]float64, w)
	r.caches = make([][]contribution, w)
	r.rows = make([]rowConsts, w)
	r.stores = make([]kernelStore, w)
	if len(r.rho) <= maxKeptPixels {
		for i := range r.stores {
			r.stores[i].budget = int(opt.KernelCache / int64(w))
		}
	}
	for i := range r.acc {
		r.acc[i] = make([]float64, len(r.rho))
	}
	return r, nil
}

// Image returns the current image, row-major, row 0 at +y; valid until the
// next iteration.
func (r *Reconstructor) Image() []float64 {
	s := r.s
	if len(r.img) != len(r.rho) {
		r.img = make([]float64, len(r.rho))
	}
	for iy := range s.NY {
		for iz := range s.NZ {
			r.img[iy*s.NZ+iz] = r.rho[r.at(iz, iy)]
		}
	}
	return r.img
}

// at is the internal index of pixel (iz, iy). The image is kept column
// by column (y runs fastest) because events are walked along columns.
func (r *Reconstructor) at(iz, iy int) int { return iz*r.s.NY + iy }

// Iterate runs one MLEM iteration. Events are split into one contiguous
// block per worker, which keeps the kernel values of its first events in
// the first iteration. Later iterations run the kept events on all
// workers (see keptIterations) and the others in the worker's block; the
// images are summed in a fixed order, so the result is deterministic for
// a given number of workers.
func (r *Reconstructor) Iterate() {
	w := r.workers
	r.done = 0
	kept := len(r.kept.chunks) > 0
	if kept {
		r.kept.iterate(r.rho, r.sens, w, r.report)
	}
	var wg sync.WaitGroup
	for id := range w {
		lo, hi := id*len(r.events)/w, (id+1)*len(r.events)/w
		if r.iterated {
			lo += r.stores[id].events
		}
		wg.Go(func() {
			r.caches[id] = r.accumulate(r.events[lo:hi], r.acc[id], r.caches[id], &r.rows[id], &r.stores[id])
		})
	}
	wg.Wait()
	for p := range r.rho {
		var sum float64
		if kept {
			sum = r.kept.acc[p]
		}
		for id := range w {
			sum += r.acc[id][p]
			r.acc[id][p] = 0
		}
		r.rho[p] *= sum // the factor rho of every contribution (see accumulate)
	}
	if !r.iterated {
		for i := range r.stores {
			r.stores[i].closed = true
		}
		r.kept.build(r.stores)
		r.iterated = true
	}
}

// CachedEvents returns how many events have their kernel values kept.
func (r *Reconstructor) CachedEvents() int {
	n := 0
	for i := range r.stores {
		n += r.stores[i].events
	}
	return n
}

// accumulate adds the events' contributions to acc: per event a first
// pass over the ellipse computes the denominator (and keeps the kernel
// values), a second adds kernel/denominator to each pixel; Iterate
// multiplies the sums by rho.
//
// An event's ellipse covers about 15 columns of about 15 pixels at the
// paper's set-up (223 pixels on average). It is walked column by column
// over exactly the pixels whose centres it contains. What depends on the row
// only (the kernel's a and o vectors) is computed once per row; along a
// column the Gaussian kernel's exponent is a quadratic in dy, so the
// factor is stepped with two multiplications per pixel.
func (r *Reconstructor) accumulate(events []prepared, acc []float64, cache []contribution, rows *rowConsts, store *kernelStore) []contribution {
	s := r.s
	rho, sens := r.rho, r.sens
	gaussian := r.opt.Kernel == Gaussian
	p := s.Pixel
	zFirst := -float64(s.NZ)*p/2 + p/2 // centre of column 0
	yFirst := float64(s.NY)*p/2 - p/2  // centre of row 0
	rows.resize(s.NY)
	for i := range events {
		if i > 0 && i%progressBlock == 0 {
			r.report(progressBlock)
		}
		e := &events[i]
		k := &e.k
		cache = cache[:0]
		store.tmp = store.tmp[:0]
		keep := !store.closed
		var denom float64
		sec2 := k.sec * k.sec
		for iy := e.y0; iy < e.y1; iy++ {
			Y := yFirst - float64(iy)*p
			dy := Y - k.y
			a1, a2, a3 := -(Y-k.r)*sec2, -(Y+k.r)*sec2, -2*Y*k.sec*k.tan
			b3 := -2 * dy * k.sec
			aCa := (a1*a1+a2*a2)*k.isz2 + a3*a3*k.isdl2
			rows.b3C[iy] = b3 * b3 * k.isdl2
			if gaussian {
				rows.pref[iy] = k.norm / math.Sqrt(aCa)
				continue
			}
			// n = n0 + n1*b1 and bCa = m0 + m1*b1 with b1 = dz - dy*tan.
			o1, o2, o3 := a1*k.tan, a2*k.tan, -Y*k.sec*(1+2*k.tan*k.tan)
			rows.n0[iy], rows.n1[iy] = aCa+2*o3*b3*k.isdl2, 2*(o1+o2)*k.isz2
			rows.m0[iy], rows.m1[iy] = a3*b3*k.isdl2, (a1+a2)*k.isz2
		}
		// Consecutive steps of the Gaussian along a column differ by the
		// constant second difference of its exponent.
		curve := math.Exp(-2 * p * p * (k.isz2*k.tan*k.tan + 2*k.isdl2*sec2))
		for iz := e.z0; iz < e.z1; iz++ {
			dz := zFirst + float64(iz)*p - k.z
			lo, hi, ok := k.columnSpan(dz, yFirst-k.y, p, e.y0, e.y1)
			if !ok {
				continue
			}
			if keep {
				store.addRun(iz*s.NY+lo, hi-lo+1)
			}
			dy := yFirst - float64(lo)*p - k.y
			var g, step float64
			if gaussian {
				q := func(dy float64) float64 {
					u := dz - dy*k.tan
					return -k.isz2*u*u - 2*k.isdl2*sec2*dy*dy
				}
				g = math.Exp(q(dy))
				step = math.Exp(q(dy-p) - q(dy))
			}
			col := rows.col[lo : hi+1]
			if gaussian {
				for q := range col {
					col[q] = rows.pref[lo+q] * g
					g *= step
					step *= curve
				}
			} else {
				a, b, n := rows.a[lo:hi+1], rows.b[lo:hi+1], rows.n[lo:hi+1]
				for q := range col {
					iy := lo + q
					b1 := dz - dy*k.tan
					n[q] = rows.n0[iy] + rows.n1[iy]*b1
					b[q] = rows.m0[iy] + rows.m1[iy]*b1
					a[q] = 2*k.isz2*b1*b1 + rows.b3C[iy]
					dy -= p
				}
				analyticValues(k.norm, a, b, n, col)
			}
			for q, kv := range col {
				pix := iz*s.NY + lo + q
				cache = append(cache, contribution{int32(pix), kv})
				v := kv * rho[pix]
				if sens != nil {
					v *= sens[pix]
				}
				denom += v
			}
		}
		if keep {
			store.keep(cache)
		}
		if denom == 0 {
			continue
		}
		inv := 1 / denom
		for _, c := range cache {
			acc[c.pix] += c.k * inv
		}
	}
	if len(events) > 0 {
		r.report((len(events)-1)%progressBlock + 1)
	}
	return cache
}

// rowConsts are one worker's per-row kernel constants of the current event.
// The analytic kernel along a column is gathered as a, b, n (see
// analyticValues) and evaluated into col in one call.
type rowConsts struct{ pref, b3C, n0, n1, m0, m1, a, b, n, col []float64 }

func (r *rowConsts) resize(n int) {
	if len(r.pref) < n {
		all := make([]float64, 10*n)
		*r = rowConsts{all[:n], all[n : 2*n], all[2*n : 3*n], all[3*n : 4*n], all[4*n : 5*n],
			all[5*n : 6*n], all[6*n : 7*n], all[7*n : 8*n], all[8*n : 9*n], all[9*n:]}
	}
}

// columnSpan returns the rows [lo, hi] within [y0, y1) of the pixels in the
// column at offset dz whose centres lie in the ellipse (top is the offset
// of row 0's centre from the event): the analytic interval, its ends
// fixed with the exact test so that the set is the one a pixel-by-pixel
// test gives.
func (k *kernel) columnSpan(dz, top, p float64, y0, y1 int) (lo, hi int, ok bool) {
	// A*dy^2 + B*dz*dy + C*dz^2 <= 9; row iy has dy = top - iy*p.
	disc := k.b*k.b*dz*dz - 4*k.a*(k.c*dz*dz-9)
	centre := -k.b * dz / (2 * k.a)
	half := math.Sqrt(max(disc, 0)) / (2 * k.a)
	in := func(iy int) bool { return k.inside(top-float64(iy)*p, dz) }
	lo = max(y0, int(math.Ceil((top-centre-half)/p)))
	hi = min(y1-1, int(math.Floor((top-centre+half)/p)))
	if lo > y0 && in(lo-1) {
		lo--
	} else if lo <= hi && !in(lo) {
		lo++
	}
	if hi < y1-1 && in(hi+1) {
		hi++
	} else if hi >= lo && !in(hi) {
		hi--
	}
	if disc < 0 && lo > hi { // the column may still touch at the vertex
		c := min(max(int(math.Round((top-centre)/p)), y0), y1-1)
		if in(c) {
			return c, c, true
		}
	}
	return lo, hi, lo <= hi
}

// prepare computes an event's kernel constants and its pixel box: the
// pixels around its reconstructed point within the 3-sigma ellipse's
// half extents (see Options.AuthorsBox).
func (s Scanner) prepare(e Event, authorsBox bool) prepared {
	p := s.Reconstruct(e)
	k := newKernel(s, p)
	hy, hz := k.halfBox()
	zLeft, yTop := -float64(s.NZ)*s.Pixel/2, float64(s.NY)*s.Pixel/2
	iz, iy := int((p.Z-zLeft)/s.Pixel), int((yTop-p.Y)/s.Pixel)
	dz, dy := int(hz/s.Pixel+0.5), int(hy/s.Pixel+0.5)
	clamp := func(v, n int) int { return min(max(v, 0), n-1) }
	pe := prepared{k: k, z0: clamp(iz-dz, s.NZ), z1: clamp(iz+dz, s.NZ), y0: clamp(iy-dy, s.NY), y1: clamp(iy+dy, s.NY)}
	if !authorsBox {
		pe.z1++
		pe.y1++
	}
	return pe
}

// EventKernel is what a device backend needs of an event: its
// reconstructed point (Y, Z), the tangent of its angle and the secant,
// and its pixel box [Z0, Z1) x [Y0, Y1), as this package computes them.
// The layout is the OpenCL kernels' (four doubles, four 32-bit integers).
type EventKernel struct {
	Y, Z, Tan, Sec float64
	Z0, Z1, Y0, Y1 int32
}

// EventKernels prepares events for a device backend, as NewReconstructor
// does for the CPU; s must have its defaults (see WithDefaults).
func (s Scanner) EventKernels(events []Event, authorsBox bool) []EventKernel {
	out := make([]EventKernel, len(events))
	for i, e := range events {
		pe := s.prepare(e, authorsBox)
		out[i] = EventKernel{Y: pe.k.y, Z: pe.k.z, Tan: pe.k.tan, Sec: pe.k.sec,
			Z0: int32(pe.z0), Z1: int32(pe.z1), Y0: int32(pe.y0), Y1: int32(pe.y1)}
	}
	return out
}

// KernelConstants returns the constants of P(e | pixel) that do not
// depend on the event: 1/sigma_z^2, 1/sigma_dl^2 and the normalisation.
func (s Scanner) KernelConstants() (isz2, isdl2, norm float64) {
	return 1 / (s.SigmaZ * s.SigmaZ), 1 / (s.SigmaDL * s.SigmaDL),
		1 / (2 * math.Pi * math.Pi) * math.Sqrt(1/(s.SigmaZ*s.SigmaZ*s.SigmaZ*s.SigmaZ*s.SigmaDL*s.SigmaDL))
}

// Validate reports options a reconstruction cannot run with: an unknown
// kernel, or negative workers or cache.
func (o Options) Validate() error {
	switch {
	case o.Kernel > Gaussian:
		return fmt.Errorf("jpet: unknown kernel %d", o.Kernel)
	case o.Workers < 0:
		return fmt.Errorf("jpet: %d workers: must not be negative", o.Workers)
	case o.KernelCache < 0:
		return fmt.Errorf("jpet: kernel cache of %d bytes: must not be negative", o.KernelCache)
	}
	return nil
}
