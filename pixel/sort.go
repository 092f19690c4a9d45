package pixel

import (
	"cmp"
	"math/bits"
	"slices"
)

// timeSort orders batches of times; its buffers are reused between calls.
type timeSort struct {
	perm      []int32
	keys, tmp []uint64
}

// sortByTime returns the permutation that orders toa stably (equal times
// keep their order), valid until the next call.
//
// It is an LSD radix sort of the time offsets from the minimum, each packed
// with its index into one uint64 (offset above, index below), so that a
// pass moves one array and never reads the times at random; digits are
// 8 bits, whose 256 output streams stay in L1 (11-bit digits, one pass
// fewer, were slower: their 2048 streams spill to L2). Passes in which
// every key has the same digit are skipped: a batch spanning a few
// milliseconds takes four. A batch whose offsets and indices do not fit in
// 64 bits (one spanning over half an hour) is sorted by comparison.
func (s *timeSort) sortByTime(toa []Time) []int32 {
	n := len(toa)
	perm := growLen(s.perm, n)
	s.perm = perm
	if n == 0 {
		return perm
	}
	lo, hi := toa[0], toa[0]
	for _, t := range toa {
		lo, hi = min(lo, t), max(hi, t)
	}
	idxBits := uint(bits.Len(uint(n - 1)))
	keyBits := uint(bits.Len64(uint64(hi - lo)))
	if keyBits+idxBits > 64 {
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(toa[a], toa[b]) })
		return perm
	}
	keys, tmp := growLen(s.keys, n), growLen(s.tmp, n)
	for i, t := range toa {
		keys[i] = uint64(t-lo)<<idxBits | uint64(i)
	}
	// The keys are counted and moved in four quarters side by side: in
	// nearly sorted data most keys share the digit of the one before, and
	// the increments of one counter would wait on each other; four
	// counters overlap the waits. A quarter's keys of a digit go after
	// those of the quarters before, so the sort stays stable. The keys
	// past the four equal quarters belong to the last one.
	q := n / 4
	for shift := idxBits; shift < idxBits+keyBits; shift += 8 {
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
		if d := uint8(keys[0] >> shift); c[0][d]+c[1][d]+c[2][d]+c[3][d] == int32(n) {
			continue // one digit for all: this pass would not move anything
		}
		sum := int32(0)
		for d := range 256 {
			for w := range c {
				sum, c[w][d] = sum+c[w][d], sum
			}
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
	s.keys, s.tmp = keys, tmp
	perm = perm[:len(keys)]
	for i, k := range keys {
		perm[i] = int32(k & (1<<idxBits - 1))
	}
	return perm
}
