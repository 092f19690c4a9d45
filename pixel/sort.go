package pixel

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
)

// timeSort orders batches of times; its buffers are reused between calls.
type timeSort struct {
	perm      []int32
	keys, tmp []uint64
	// mergeBehind's: the hits in order and those behind (late), the
	// times and order of the latter.
	inOrder, late []int32
	lateToA       []Time
	latePerm      []int32
	// dev, when set, sorts the keys of batches of at least dev.MinKeys;
	// devErr is its first failure (the batch is sorted here, and so are
	// the batches after it), devBatches the batches it sorted.
	dev        KeySorter
	devErr     error
	devBatches int
}

// timeRange is what sortByTime needs to know of a batch's times, found
// by its caller's pass over them: the earliest and latest, the OR of
// their differences from the first, and how many are behind (earlier than
// one before them).
type timeRange struct {
	lo, hi Time
	diffs  uint64
	behind int
}

// startRange is the range of a batch before its first time t0.
func startRange(t0 Time) timeRange { return timeRange{lo: t0, hi: t0} }

// add takes the next time t of a batch whose first time is t0.
func (r *timeRange) add(t, t0 Time) {
	if t < r.hi {
		r.behind++
	}
	r.lo, r.hi, r.diffs = min(r.lo, t), max(r.hi, t), r.diffs|uint64(t-t0)
}

// sortByTime returns the permutation that orders toa stably (equal times
// keep their order), valid until the next call; r is the range of toa. A
// batch with few times behind goes through mergeBehind, the others
// through radixSort.
func (s *timeSort) sortByTime(toa []Time, r timeRange) []int32 {
	n := len(toa)
	perm := growLen(s.perm, n)
	s.perm = perm
	switch {
	case r.behind == 0: // in order, but for hits the caller drops
		for i := range perm {
			perm[i] = int32(i)
		}
		return perm
	case r.fewBehind(n):
		return s.mergeBehind(perm, toa, r.behind)
	}
	s.radix(perm, toa, r)
	return perm
}

// radix is radixSort, on the device where one is set and the batch is
// large enough.
func (s *timeSort) radix(perm []int32, toa []Time, r timeRange) {
	if s.dev != nil && s.devErr == nil && len(toa) >= s.dev.MinKeys() {
		if keys, idxBits, keyBits, ok := radixKeys(toa, r, &s.keys); ok {
			if s.devErr = s.dev.SortKeys(keys, idxBits, keyBits, perm); s.devErr == nil {
				if s.devErr = checkOrder(perm, toa); s.devErr == nil {
					s.devBatches++
					return
				}
			}
		}
	}
	radixSort(perm, toa, r, &s.keys, &s.tmp)
}

// checkOrder checks that perm orders toa stably: its entries in range and
// their (time, index) rising, which also makes them a permutation. A
// device's order is checked so, in one pass, before any hit moves.
func checkOrder(perm []int32, toa []Time) error {
	prev, prevT := int32(-1), Time(-1<<63)
	for k, i := range perm {
		if i < 0 || int(i) >= len(toa) || toa[i] < prevT || toa[i] == prevT && i <= prev {
			return fmt.Errorf("pixel: the key sorter's order breaks at place %d of %d (index %d)", k, len(perm), i)
		}
		prev, prevT = i, toa[i]
	}
	return nil
}

// fewBehind reports whether mergeBehind sorts a batch of n times with
// range r faster than radixSort. Measured on 64 Ki times: the merge takes
// about 4 + 27 f ns a time with a fraction f behind (its loops mispredict
// where the two sides interleave), radix about 2 + 2 p ns with p passes
// (8 bits of the offsets each; those the grid of 25 would save are not
// counted here). So the merge wins below f = (p - 1) / 13.5: a tenth
// behind at three passes, a fifth at four.
func (r timeRange) fewBehind(n int) bool {
	zeros := uint(bits.TrailingZeros64(r.diffs)) & 63
	passes := (bits.Len64(uint64(r.hi-r.lo)>>zeros) + 7) / 8
	return r.behind > 0 && 27*r.behind < 2*n*(passes-1)
}

// mergeBehind is sortByTime for a batch in which few times (behind of
// them) are earlier than one before them, as in a real readout: 88 % of
// the hits of the four-chip background run in ../shared/data come in
// order, against 5 % of a simulated readout with each hit delayed at
// random. The times at or above all before them are in order already;
// only the others are sorted (by radixSort), and the two are merged, the
// ones in order first where times are equal. That keeps the sort stable:
// a time behind is below every time after it in order, so it can only
// equal times before it.
func (s *timeSort) mergeBehind(perm []int32, toa []Time, behind int) []int32 {
	inOrder := growLen(s.inOrder, len(toa)-behind)[:0]
	late := growLen(s.late, behind)[:0]
	times := growLen(s.lateToA, behind)[:0]
	hi := toa[0]
	for i, t := range toa {
		if t >= hi {
			inOrder, hi = append(inOrder, int32(i)), t
		} else {
			late, times = append(late, int32(i)), append(times, t)
		}
	}
	s.inOrder, s.late, s.lateToA = inOrder, late, times
	r := startRange(times[0])
	for _, t := range times {
		r.add(t, times[0])
	}
	order := growLen(s.latePerm, len(times))
	s.latePerm = order
	s.radix(order, times, r)
	k, i := 0, 0
	for _, j := range order {
		t := times[j]
		for i < len(inOrder) && toa[inOrder[i]] <= t {
			perm[k] = inOrder[i]
			i, k = i+1, k+1
		}
		perm[k] = late[j]
		k++
	}
	copy(perm[k:], inOrder[i:])
	return perm
}

// radixSort writes to perm the permutation that orders toa stably; r is
// the range of toa, keys and tmp scratch.
//
// It is an LSD radix sort of the time offsets from the minimum, each packed
// with its index into one uint64 (offset above, index below), so that a
// pass moves one array and never reads the times at random; digits are
// 8 bits, whose 256 output streams stay in L1 (11-bit digits, one pass
// fewer, were slower: their 2048 streams spill to L2). The offsets are
// first divided by what they all have in common: a power of two and, on
// the Timepix3's grid of 1.5625 ns (100 units), 25 too, which leaves a
// batch spanning a few milliseconds 22 bits, three passes, rather than 29.
// Passes in which every key has the same digit are skipped, and the last
// pass writes the permutation. A batch whose offsets and indices do not fit
// in 64 bits (one spanning over half an hour) is sorted by comparison.
func radixSort(perm []int32, toa []Time, r timeRange, keysBuf, tmpBuf *[]uint64) {
	keys, idxBits, keyBits, ok := radixKeys(toa, r, keysBuf)
	if !ok {
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(toa[a], toa[b]) })
		return
	}
	radixPasses(perm, keys, tmpBuf, idxBits, keyBits)
}

// radixKeys writes to *keysBuf the keys radixSort sorts, and returns them
// with the bits of the indices under the offsets and those of the
// offsets; ok is false, and the keys unset, where they do not fit in 64
// bits together.
func radixKeys(toa []Time, r timeRange, keysBuf *[]uint64) (keys []uint64, idxBits, keyBits uint, ok bool) {
	n := len(toa)
	if n == 0 {
		return nil, 0, 0, true
	}
	idxBits = uint(bits.Len(uint(n - 1)))
	zeros := uint(bits.TrailingZeros64(r.diffs)) & 63
	span := uint64(r.hi-r.lo) >> zeros
	keyBits = uint(bits.Len64(span / 25))
	keys = growLen(*keysBuf, n)
	*keysBuf = keys
	if keyBits+idxBits <= 64 && !scaledKeys(keys, toa, r.lo, zeros, 25, idxBits) {
		keyBits = uint(bits.Len64(span))
		if keyBits+idxBits <= 64 {
			scaledKeys(keys, toa, r.lo, zeros, 1, idxBits)
		}
	}
	return keys, idxBits, keyBits, keyBits+idxBits <= 64
}

// radixPasses sorts keys made by radixKeys by their offsets and writes
// their indices in that order to perm; *tmpBuf is scratch, and the keys
// are left in any order.
func radixPasses(perm []int32, keys []uint64, tmpBuf *[]uint64, idxBits, keyBits uint) {
	n := len(keys)
	if n == 0 {
		return
	}
	tmp := growLen(*tmpBuf, n)
	*tmpBuf = tmp
	// The keys are counted and moved in four quarters side by side: in
	// nearly sorted data most keys share the digit of the one before, and
	// the increments of one counter would wait on each other; four
	// counters overlap the waits. A quarter's keys of a digit go after
	// those of the quarters before, so the sort stays stable. The keys
	// past the four equal quarters belong to the last one.
	q := n / 4
	last := false // the last pass writes the permutation rather than keys
	for shift := idxBits; !last; shift += 8 {
		last = shift+8 >= idxBits+keyBits
		k0, k1, k2, k3 := keys[:q], keys[q:2*q], keys[2*q:3*q], keys[3*q:4*q]
		rest := keys[4*q:]
		var c [4][256]int32
		for i, k := range k0 {
			c[0][uint8(k>>shift)]++
			c[1][uint8(k1[i]>>shift)]++
			c[2][uint8(k2[i]>>shift)]++
			c[3][uint8(k3[i]>>shift)]++
		}
		for _, k := range rest {
			c[3][uint8(k>>shift)]++
		}
		if d := uint8(keys[0] >> shift); c[0][d]+c[1][d]+c[2][d]+c[3][d] == int32(n) && !last {
			continue // one digit for all: this pass would not move anything
		}
		sum := int32(0)
		for d := range 256 {
			for w := range c {
				sum, c[w][d] = sum+c[w][d], sum
			}
		}
		if last {
			permute(perm, k0, k1, k2, k3, rest, &c, shift, 1<<idxBits-1)
			break
		}
		for i, k := range k0 {
			d0, d1, d2, d3 := uint8(k>>shift), uint8(k1[i]>>shift), uint8(k2[i]>>shift), uint8(k3[i]>>shift)
			tmp[c[0][d0]] = k
			c[0][d0]++
			tmp[c[1][d1]] = k1[i]
			c[1][d1]++
			tmp[c[2][d2]] = k2[i]
			c[2][d2]++
			tmp[c[3][d3]] = k3[i]
			c[3][d3]++
		}
		for _, k := range rest {
			d := uint8(k >> shift)
			tmp[c[3][d]] = k
			c[3][d]++
		}
		keys, tmp = tmp, keys
	}
}

// permute is the last pass of radixSort: the keys' indices go to their
// places in perm.
func permute(perm []int32, k0, k1, k2, k3, rest []uint64, c *[4][256]int32, shift uint, mask uint64) {
	k1, k2, k3 = k1[:len(k0)], k2[:len(k0)], k3[:len(k0)]
	for i, k := range k0 {
		d0, d1, d2, d3 := uint8(k>>shift), uint8(k1[i]>>shift), uint8(k2[i]>>shift), uint8(k3[i]>>shift)
		perm[c[0][d0]] = int32(k & mask)
		c[0][d0]++
		perm[c[1][d1]] = int32(k1[i] & mask)
		c[1][d1]++
		perm[c[2][d2]] = int32(k2[i] & mask)
		c[2][d2]++
		perm[c[3][d3]] = int32(k3[i] & mask)
		c[3][d3]++
	}
	for _, k := range rest {
		d := uint8(k >> shift)
		perm[c[3][d]] = int32(k & mask)
		c[3][d]++
	}
}

// scaledKeys writes the sort keys of toa: each time's offset from lo,
// shifted right by zeros and divided by div (odd), above its index. It
// reports whether every shifted offset was a multiple of div, and stops
// at the first that is not: the division is a multiplication by div's
// inverse modulo 2^64, exact for multiples and far above the quotients'
// range otherwise.
func scaledKeys(keys []uint64, toa []Time, lo Time, zeros uint, div uint64, idxBits uint) bool {
	inv := div // Newton's iteration for the inverse: each step doubles the bits right
	for range 5 {
		inv *= 2 - div*inv
	}
	limit := ^uint64(0) / div
	keys = keys[:len(toa)]
	for i, t := range toa {
		q := uint64(t-lo) >> zeros * inv
		if q > limit { // times off the grid fail at their first hits
			return false
		}
		keys[i] = q<<idxBits | uint64(i)
	}
	return true
}
