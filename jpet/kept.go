package jpet

// Kept kernel values. Once every event's kernel values are kept, an
// iteration is nothing but two passes over them per event, so these
// passes are kept lean:
//
//   - values are float32 (like the authors' code) in blocks of 4 MiB, an
//     event's values contiguous, located by its column runs packed in a
//     uint32 each (first pixel, length); blocks never move once written,
//     so keeping 10 GB costs no copying;
//   - the first pass multiplies by a float32 copy of rho (times the
//     sensitivity when it is used), the denominator summed in sixteen
//     float32 lanes - value q of a run (at most 16 long) goes to lane q -
//     and the lanes added in float64;
//   - the second pass adds kernel/denominator to a float32 image that is
//     added to the worker's float64 image every keptFlush events (a pixel
//     gets a few contributions in between); the factor rho of every
//     contribution is applied once, at the end of the iteration.
//
// The event ranges of the workers start at multiples of keptFlush, so the
// float32 partial images hold the same events whatever the number of
// workers, and only the order of the final float64 sums changes with it.
// kept_simd.go (GOEXPERIMENT=simd on amd64 with AVX2) runs the passes
// eight values at a time and gives the same bits as the portable code
// here. The lanes also break the chain of dependent additions that would
// bound a single running sum.

const (
	keptBlockValues = 1 << 20 // float32 values in a block
	keptFlush       = 512     // events between flushes of the float32 image
	keptGroup       = 128     // events whose denominators are computed together; divides keptFlush
	runLenBits      = 5       // a run's length in the low bits, its first pixel above
	runLenMask      = 1<<runLenBits - 1
	maxRun          = 16                     // longer runs are split: two vectors of eight
	maxKeptPixels   = 1 << (32 - runLenBits) // images beyond it keep nothing
	keptPad         = 16                     // readable values after every array the passes read
)

// kernelStore keeps the kernel values of a worker's first events.
type kernelStore struct {
	budget int // bytes it may hold
	held   int // bytes it holds
	blocks []keptBlock
	events int      // events kept
	closed bool     // an event did not fit: nothing after it is kept
	built  bool     // the first iteration has run: the kept events are read
	tmp    []uint32 // the runs of the event being computed
}

// keptBlock holds the kept values of consecutive events.
type keptBlock struct {
	k    []float32
	runs []uint32 // first pixel << 8 | length, per column run
	ends []int32  // ends[e]: where event e's runs end
}

// addRun appends the column run of n pixels from pix to the event being
// computed, split into runs of at most maxRun pixels.
func (st *kernelStore) addRun(pix, n int) {
	for n > 0 {
		m := min(n, maxRun)
		st.tmp = append(st.tmp, uint32(pix)<<runLenBits|uint32(m))
		pix, n = pix+m, n-m
	}
}

// keep stores the computed event (values in cache, runs in tmp) when the
// budget allows. Only a worker's first events are kept, so that they are
// found by counting.
func (st *kernelStore) keep(cache []contribution) {
	need := 4*len(cache) + 4*len(st.tmp) + 4
	if st.closed || st.held+need > st.budget {
		st.closed = true
		return
	}
	if len(st.blocks) == 0 || len(st.blocks[len(st.blocks)-1].k)+len(cache)+keptPad > keptBlockValues {
		st.blocks = append(st.blocks, keptBlock{
			k:    make([]float32, 0, max(keptBlockValues, len(cache)+keptPad)),
			runs: make([]uint32, 0, keptBlockValues/8),
		})
	}
	b := &st.blocks[len(st.blocks)-1]
	for _, c := range cache {
		b.k = append(b.k, float32(c.k))
	}
	b.runs = append(b.runs, st.tmp...)
	b.ends = append(b.ends, int32(len(b.runs)))
	st.held += need
	st.events++
}

// keptScratch is a worker's float32 images for the kept passes, and the
// inverse denominators of a group of events.
type keptScratch struct {
	rs  []float32 // rho (times the sensitivity)
	acc []float32
	inv []float64
}

// accumulateKept runs the kept events of a worker, adding to acc. The
// denominators of a group of events are computed before their
// contributions are added (they depend on rho only), so that the latency
// of summing and dividing overlaps with other work.
//
// The float32 copy of rho is scaled to a maximum of 1 (MLEM does not
// change when the image is scaled) and the contributions are scaled back
// in flushKept, so the image's own scale never matters. An event whose
// pixels all have less than about 1e-20 of the maximum activity would
// lose precision in float32; late iterations produce such regions, so
// those events are run in float64 instead.
func accumulateKept(st *kernelStore, rho, sens, acc []float64, sc *keptScratch) {
	if len(sc.rs) != len(rho)+keptPad {
		sc.rs, sc.acc = make([]float32, len(rho)+keptPad), make([]float32, len(rho)+keptPad)
		sc.inv = make([]float64, keptGroup)
	}
	peak := 0.0
	for p, v := range rho {
		if sens != nil {
			v *= sens[p]
		}
		peak = max(peak, v)
	}
	if peak == 0 {
		return // no event sees any activity
	}
	for p, v := range rho {
		if sens != nil {
			v *= sens[p]
		}
		sc.rs[p] = float32(v / peak)
	}
	n := 0 // events done
	for _, b := range st.blocks {
		ks := b.k[:len(b.k)+keptPad]
		j, run := 0, 0 // where the group's values and runs start
		for e := 0; e < len(b.ends); {
			g := min(len(b.ends), e+keptGroup-n%keptGroup) // group end
			jj, rr := j, run
			for i := e; i < g; i++ {
				sc.inv[i-e], jj = keptDenominator(ks, jj, b.runs[rr:b.ends[i]], sc.rs)
				rr = int(b.ends[i])
			}
			for i := e; i < g; i++ {
				runs := b.runs[run:b.ends[i]]
				if inv := sc.inv[i-e]; inv <= maxInv32 {
					j = keptAdd(ks, j, runs, float32(inv), sc.acc)
				} else {
					j = keptEventFloat64(ks, j, runs, rho, sens, acc)
				}
				run = int(b.ends[i])
			}
			n += g - e
			if n%keptFlush == 0 {
				flushKept(acc, sc.acc, peak)
			}
			e = g
		}
	}
	flushKept(acc, sc.acc, peak)
}

// maxInv32 bounds the inverse denominators of the float32 pass (see
// accumulateKept); with kernel values below 1e10 in any units, their
// products stay far from float32's overflow too.
const maxInv32 = 1e20

// flushKept adds the float32 image, scaled back by the peak that the
// float32 rho was divided by, to acc and clears it.
func flushKept(acc []float64, acc32 []float32, peak float64) {
	acc32 = acc32[:len(acc)]
	scale := 1 / peak
	for p, v := range acc32 {
		acc[p] += float64(v) * scale
	}
	clear(acc32)
}

// keptDenominatorGo returns the inverse of an event's denominator from
// its values ks[at:] (0 when the denominator is 0: an event that sees no
// activity adds nothing), and where the values end.
func keptDenominatorGo(ks []float32, at int, runs []uint32, rs []float32) (float64, int) {
	var l [16]float32
	j := at
	for _, r := range runs {
		pix, n := int(r>>runLenBits), int(r&runLenMask)
		kr, rr := ks[j:j+n], rs[pix:pix+n]
		for q, k := range kr {
			l[q&(maxRun-1)] += k * rr[q]
		}
		j += n
	}
	return inverse(&l), j
}

// inverse adds the sixteen lanes pairwise in float64 and inverts; a zero
// sum gives 0 (an event that sees no activity adds nothing).
func inverse(l *[16]float32) float64 {
	var d [8]float64
	for i := range d {
		d[i] = float64(l[i]) + float64(l[i+8])
	}
	sum := ((d[0] + d[1]) + (d[2] + d[3])) + ((d[4] + d[5]) + (d[6] + d[7]))
	if sum == 0 {
		return 0
	}
	return 1 / sum
}

// keptAddGo adds an event's values ks[at:] times inv to acc; it returns
// where the values end.
func keptAddGo(ks []float32, at int, runs []uint32, inv float32, acc []float32) int {
	return addRuns(ks, at, runs, inv, acc)
}

func addRuns[F float32 | float64](ks []float32, at int, runs []uint32, inv F, acc []F) int {
	j := at
	for _, r := range runs {
		pix, n := int(r>>runLenBits), int(r&runLenMask)
		kr, ar := ks[j:j+n], acc[pix:pix+n]
		for q, k := range kr {
			ar[q] += F(k) * inv
		}
		j += n
	}
	return j
}

// keptEventFloat64 is both passes of an event in float64 with the
// worker's rho, straight into its float64 image.
func keptEventFloat64(ks []float32, at int, runs []uint32, rho, sens, acc []float64) int {
	var denom float64
	j := at
	for _, r := range runs {
		pix, n := int(r>>runLenBits), int(r&runLenMask)
		for q, k := range ks[j : j+n] {
			v := float64(k) * rho[pix+q]
			if sens != nil {
				v *= sens[pix+q]
			}
			denom += v
		}
		j += n
	}
	if denom == 0 {
		return j
	}
	return addRuns(ks, at, runs, 1/denom, acc)
}
