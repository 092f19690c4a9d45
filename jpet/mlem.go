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
	// KernelCache is how many bytes the reconstruction may keep kernel
	// values in (a float32 per pixel of an event, about 4.5 bytes with
	// the column runs that locate them), so that iterations after the
	// first read them instead of computing them; events beyond the budget
	// are computed every time. 0 keeps none.
	KernelCache int64
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
	rho     []float64 // column-major, see at
	img     []float64 // row-major copy returned by Image
	sens    []float64
	acc     [][]float64 // per worker
	caches  [][]contribution
	rows    []rowConsts
	stores  []kernelStore
	workers int
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
				r.sens[r.at(iz, iy)] = s.PixelSensitivity(iz, iy)
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
	r.rows = make([]rowConsts, w)
	r.stores = make([]kernelStore, w)
	for i := range r.stores {
		r.stores[i].budget = int(opt.KernelCache / int64(w))
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
// block per worker and the workers' images are summed in worker order, so
// the result is deterministic for a given number of workers.
func (r *Reconstructor) Iterate() {
	w := r.workers
	var wg sync.WaitGroup
	for id := range w {
		lo, hi := id*len(r.events)/w, (id+1)*len(r.events)/w
		wg.Go(func() {
			r.caches[id] = r.accumulate(r.events[lo:hi], r.acc[id], r.caches[id], &r.rows[id], &r.stores[id])
		})
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
	for i := range r.stores {
		r.stores[i].built = true
	}
}

// kernelStore keeps the kernel values of a worker's first events, column
// run by column run, so that pixel indices need not be stored.
type kernelStore struct {
	budget int // bytes it may hold
	k      []float32
	runs   []colRun
	end    []int // end[i]: where event i's runs end; events past len(end) are not kept
	built  bool
	tmp    []colRun // the runs of the event being computed
}

// colRun is the rows lo..hi of column iz inside an event's ellipse.
type colRun struct{ iz, lo, hi int32 }

func (st *kernelStore) bytes() int { return 4*len(st.k) + 12*len(st.runs) }

// CachedEvents returns how many events have their kernel values kept.
func (r *Reconstructor) CachedEvents() int {
	n := 0
	for i := range r.stores {
		n += len(r.stores[i].end)
	}
	return n
}

// accumulate adds the events' contributions to acc: per event a first
// pass over the ellipse computes the denominator (and keeps the kernel
// values), a second adds kernel*rho/denominator to each pixel.
//
// An event's ellipse is tall (sigma_dl is four times sigma_z: ~30 rows by
// ~7 columns at the paper's set-up), so it is walked column by column over
// exactly the pixels whose centres it contains. What depends on the row
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
	kOffset := 0 // position in store.k of the next kept event
	for i := range events {
		if store.built && i < len(store.end) {
			start := 0
			if i > 0 {
				start = store.end[i-1]
			}
			kStart := kOffset
			kOffset = accumulateKept(store.k, kStart, store.runs[start:store.end[i]], s.NY, rho, sens, acc)
			continue
		}
		e := &events[i]
		k := &e.k
		cache = cache[:0]
		store.tmp = store.tmp[:0]
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
			store.tmp = append(store.tmp, colRun{int32(iz), int32(lo), int32(hi)})
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
			for iy := lo; iy <= hi; iy++ {
				var kv float64
				if gaussian {
					kv = rows.pref[iy] * g
					g *= step
					step *= curve
				} else {
					b1 := dz - dy*k.tan
					n := rows.n0[iy] + rows.n1[iy]*b1
					bCa := rows.m0[iy] + rows.m1[iy]*b1
					kv = k.norm / math.Sqrt(n) * math.Exp(-0.5*(2*k.isz2*b1*b1+rows.b3C[iy]-bCa*bCa/n))
					dy -= p
				}
				pix := iz*s.NY + iy
				cache = append(cache, contribution{int32(pix), kv})
				v := kv * rho[pix]
				if sens != nil {
					v *= sens[pix]
				}
				denom += v
			}
		}
		if !store.built && i == len(store.end) && store.bytes()+4*len(cache)+12*len(store.tmp) <= store.budget {
			for _, c := range cache {
				store.k = append(store.k, float32(c.k))
			}
			store.runs = append(store.runs, store.tmp...)
			store.end = append(store.end, len(store.runs))
		}
		if denom == 0 {
			continue
		}
		inv := 1 / denom
		for _, c := range cache {
			acc[c.pix] += c.k * rho[c.pix] * inv
		}
	}
	return cache
}

// accumulateKept is the two passes of one event from kept kernel values
// ks[at:] laid out by the column runs; it returns where the event's values
// end.
func accumulateKept(ks []float32, at int, runs []colRun, ny int, rho, sens, acc []float64) int {
	// Each run is a contiguous slice of the column-major image, so the
	// inner loops run over aligned sub-slices without bounds checks.
	var denom float64
	j := at
	for _, r := range runs {
		pix, n := int(r.iz)*ny+int(r.lo), int(r.hi-r.lo)+1
		kr, rr := ks[j:j+n], rho[pix:pix+n]
		if sens != nil {
			sr := sens[pix : pix+n]
			for q, k := range kr {
				denom += float64(k) * rr[q] * sr[q]
			}
		} else {
			for q, k := range kr {
				denom += float64(k) * rr[q]
			}
		}
		j += n
	}
	if denom == 0 {
		return j
	}
	inv := 1 / denom
	j = at
	for _, r := range runs {
		pix, n := int(r.iz)*ny+int(r.lo), int(r.hi-r.lo)+1
		kr, rr, ar := ks[j:j+n], rho[pix:pix+n], acc[pix:pix+n]
		for q, k := range kr {
			ar[q] += float64(k) * rr[q] * inv
		}
		j += n
	}
	return j
}

// rowConsts are one worker's per-row kernel constants of the current event.
type rowConsts struct{ pref, b3C, n0, n1, m0, m1 []float64 }

func (r *rowConsts) resize(n int) {
	if len(r.pref) < n {
		*r = rowConsts{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)}
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
