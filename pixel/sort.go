package pixel

// sortByTime returns the permutation that orders toa stably (equal times
// keep their order). It is an LSD radix sort on the time offset from the
// minimum, 11 bits a pass, skipping passes in which every key has the same
// digit, so a batch spanning a few milliseconds takes three passes.
// perm and scratch are reused between calls.
func sortByTime(toa []Time, perm, scratch []int32) ([]int32, []int32) {
	n := len(toa)
	perm, scratch = resize(perm, n), resize(scratch, n)
	if n == 0 {
		return perm, scratch
	}
	lo, hi := toa[0], toa[0]
	for _, t := range toa {
		lo, hi = min(lo, t), max(hi, t)
	}
	for i := range perm {
		perm[i] = int32(i)
	}
	span := uint64(hi - lo)
	const bits = 11
	var count [1 << bits]int32
	for shift := uint(0); shift < 64 && span>>shift != 0; shift += bits {
		count = [1 << bits]int32{}
		for _, i := range perm {
			count[(uint64(toa[i]-lo)>>shift)&(1<<bits-1)]++
		}
		if count[(uint64(toa[perm[0]]-lo)>>shift)&(1<<bits-1)] == int32(n) {
			continue // one digit for all: this pass would not move anything
		}
		sum := int32(0)
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, i := range perm {
			d := (uint64(toa[i]-lo) >> shift) & (1<<bits - 1)
			scratch[count[d]] = i
			count[d]++
		}
		perm, scratch = scratch, perm
	}
	return perm, scratch
}

func resize(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
