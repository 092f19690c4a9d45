package jpet

import (
	"sync"
	"sync/atomic"

	"github.com/hitflow/hitflow/internal/prefault"
)

// Kept kernel values. Once every event's kernel values are kept, an
// iteration is nothing but two passes over them per event, so these
// passes are kept lean:
//
//   - values are float32 (like the authors' code) in blocks of 4 MiB, an
//     event's values contiguous, located by its column runs packed in a
//     uint32 each (first pixel, length); blocks never move once written,
//     so keeping 10 GB costs no copying;
//   - the first pass multiplies by a float32 copy of rho (times the
//     sensitivity when it is used) scaled to a peak of 1, the
//     denominator summed in sixteen
//     float32 lanes - value q of a run (at most 16 long) goes to lane q -
//     and the lanes added in float64;
//   - the second pass adds kernel/denominator to a float32 image per
//     chunk of keptFlush events (a pixel gets a few contributions in a
//     chunk), added to a float64 image in chunk order; the factor rho of
//     every contribution is applied once, at the end of the iteration.
//
// kept_simd.go (GOEXPERIMENT=simd on amd64 with AVX2) runs the passes
// eight values at a time and gives the same bits as the portable code
// here. The lanes also break the chain of dependent additions that would
// bound a single running sum.

const (
	keptBlockValues = 1 << 20 // float32 values in a block
	keptFlush       = 512     // events of a chunk, which has one float32 image
	keptGroup       = 128     // events whose denominators are computed together
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
	closed bool     // an event did not fit, or the first iteration is over: nothing more is kept
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

// unpackRun returns a run's first pixel and length.
func unpackRun(r uint32) (pix, n int) { return int(r >> runLenBits), int(r & runLenMask) }

// runValues is the number of values of the runs.
func runValues(runs []uint32) int {
	n := 0
	for _, r := range runs {
		n += int(r & runLenMask)
	}
	return n
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
			k:    prefault.Make[float32](0, max(keptBlockValues, len(cache)+keptPad)),
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

// keptChunk is up to keptFlush consecutive kept events of one block: the
// unit of work of the kept iterations, and of their float32 images.
type keptChunk struct {
	block       *keptBlock
	first, last int // events [first, last) of the block
	j, run      int // where their values and runs start
}

// keptSlot holds a chunk's float32 image until it is added, in chunk
// order, to the float64 image.
type keptSlot struct {
	img      []float32
	inv      []float64
	fallback []keptChunk // single events run in float64 when added
	turn     int         // the chunk that may be written next
	ready    bool        // chunk turn is written and waits to be added
}

// keptIterations runs the kept events of all workers. Workers take the
// chunks in turn as they finish one, and each chunk's float32 image is
// added to the float64 image in chunk order (by whichever worker finds it
// next in line), so the result does not depend on which worker ran what,
// and a worker slowed down by the machine does not hold up the others.
type keptIterations struct {
	chunks []keptChunk
	rs     []float32 // rho (times the sensitivity) over its peak
	acc    []float64 // the kept events' sums of kernel/denominator
	slots  []keptSlot
	peak   float64
	rho    []float64
	sens   []float64

	// afterTake, when set (in tests), runs as a worker has taken chunk c,
	// before it waits for the chunk's slot.
	afterTake func(c int)

	mu   sync.Mutex
	turn sync.Cond // on mu: a slot's turn has moved on
	next int       // the next chunk to add
}

// build lists the chunks of the stores, in worker order.
func (k *keptIterations) build(stores []kernelStore) {
	k.chunks = k.chunks[:0]
	for i := range stores {
		for bi := range stores[i].blocks {
			b := &stores[i].blocks[bi]
			j, run := 0, 0
			for e := 0; e < len(b.ends); e += keptFlush {
				c := keptChunk{block: b, first: e, last: min(e+keptFlush, len(b.ends)), j: j, run: run}
				k.chunks = append(k.chunks, c)
				j += runValues(b.runs[run:b.ends[c.last-1]])
				run = int(b.ends[c.last-1])
			}
		}
	}
}

// iterate adds every kept event's kernel/denominator to k.acc, on the
// given number of workers; report is called with the events of each
// chunk added.
//
// The float32 copy of rho is scaled to a maximum of 1 (MLEM does not
// change when the image is scaled) and the contributions are scaled back
// when a chunk is added, so the image's own scale never matters. An event
// whose pixels all have less than about 1e-20 of the maximum activity
// would lose precision in float32; late iterations produce such regions,
// so those events are run in float64 instead.
func (k *keptIterations) iterate(rho, sens []float64, workers int, report func(int)) {
	if len(k.acc) != len(rho) {
		k.acc = make([]float64, len(rho))
		k.rs = make([]float32, len(rho)+keptPad)
	}
	clear(k.acc)
	k.rho, k.sens = rho, sens
	k.peak = 0
	for p, v := range rho {
		if sens != nil {
			v *= sens[p]
		}
		k.peak = max(k.peak, v)
	}
	if k.peak == 0 { // no event sees any activity
		for _, c := range k.chunks {
			report(c.last - c.first)
		}
		return
	}
	for p, v := range rho {
		if sens != nil {
			v *= sens[p]
		}
		k.rs[p] = float32(v / k.peak)
	}
	if len(k.slots) != 2*workers {
		k.slots = make([]keptSlot, 2*workers)
		for i := range k.slots {
			k.slots[i].img, k.slots[i].inv = make([]float32, len(rho)+keptPad), make([]float64, keptGroup)
		}
		k.turn.L = &k.mu
	}
	for i := range k.slots {
		k.slots[i].turn = i
	}
	k.next = 0
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				c := int(taken.Add(1)) - 1
				if c >= len(k.chunks) {
					return
				}
				if k.afterTake != nil {
					k.afterTake(c)
				}
				// Chunks are taken in order and added in order, so chunk
				// c-len(slots), which holds the slot before c, is added
				// before long.
				sl := &k.slots[c%len(k.slots)]
				k.mu.Lock()
				for sl.turn != c {
					k.turn.Wait()
				}
				k.mu.Unlock()
				k.run(k.chunks[c], sl)
				k.finish(c, report)
			}
		})
	}
	wg.Wait()
}

// run computes a chunk into its slot. The denominators of a group of
// events are computed before their contributions are added (they depend
// on rho only), so that the latency of summing and dividing overlaps with
// other work.
func (k *keptIterations) run(c keptChunk, sl *keptSlot) {
	b := c.block
	ks := b.k[:len(b.k)+keptPad]
	j, run := c.j, c.run
	for e := c.first; e < c.last; e += keptGroup {
		g := min(c.last, e+keptGroup)
		jj, rr := j, run
		for i := e; i < g; i++ {
			sl.inv[i-e], jj = keptDenominator(ks, jj, b.runs[rr:b.ends[i]], k.rs)
			rr = int(b.ends[i])
		}
		for i := e; i < g; i++ {
			runs := b.runs[run:b.ends[i]]
			if inv := sl.inv[i-e]; inv <= maxInv32 {
				j = keptAdd(ks, j, runs, float32(inv), sl.img)
			} else {
				sl.fallback = append(sl.fallback, keptChunk{block: b, first: i, last: i + 1, j: j, run: run})
				j += runValues(runs)
			}
			run = int(b.ends[i])
		}
	}
}

// finish marks chunk c done and adds every chunk that is next in line.
func (k *keptIterations) finish(c int, report func(int)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.slots[c%len(k.slots)].ready = true
	for k.next < len(k.chunks) {
		sl := &k.slots[k.next%len(k.slots)]
		if !sl.ready {
			return
		}
		scale := 1 / k.peak
		for p, v := range sl.img[:len(k.acc)] {
			k.acc[p] += float64(v) * scale
		}
		clear(sl.img)
		for _, f := range sl.fallback {
			b := f.block
			keptEventFloat64(b.k, f.j, b.runs[f.run:b.ends[f.first]], k.rho, k.sens, k.acc)
		}
		sl.fallback = sl.fallback[:0]
		sl.ready = false
		sl.turn += len(k.slots)
		k.turn.Broadcast()
		report(k.chunks[k.next].last - k.chunks[k.next].first)
		k.next++
	}
}

// maxInv32 bounds the inverse denominators of the float32 pass (see
// keptIterations.iterate); with kernel values below 1e10 in any units, their
// products stay far from float32's overflow too.
const maxInv32 = 1e20

// keptDenominatorGo returns the inverse of an event's denominator from
// its values ks[at:] (0 when the denominator is 0: an event that sees no
// activity adds nothing), and where the values end.
func keptDenominatorGo(ks []float32, at int, runs []uint32, rs []float32) (float64, int) {
	var l [16]float32
	j := at
	for _, r := range runs {
		pix, n := unpackRun(r)
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
		pix, n := unpackRun(r)
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
		pix, n := unpackRun(r)
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
