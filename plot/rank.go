package plot

import (
	"cmp"
	"math"
	"slices"
)

// rankSelect finds the value of a rank in values seen in passes over
// them, holding a few of them at most: each pass counts the values that
// share the leading bits found so far by their next 16 bits, which
// tells in which of those buckets the rank lies, until the values left
// are few enough to hold and sort in one more pass, or all the same. A
// quantile of billions of clusters takes two passes as a rule.
// The order is that of slices.Sort: NaNs first, and -0 equal to 0.
type rankSelect struct {
	k      int64 // the rank among the values that share prefix
	prefix uint64
	bits   int      // leading bits of the keys fixed in prefix
	counts []int64  // by the next 16 bits, while counting
	lo, hi []uint64 // the least and greatest key of each count's values
	held   []float64
	hold   bool    // this pass holds the values with prefix
	most   int64   // the most values held
	value  float64 // once found
	found  bool
}

// newRankSelect selects a value holding at most most values. Its first
// pass counts the values, whatever the rank, which is set (k, counted
// from 0) before that pass ends: a pass that also counts them finds it.
func newRankSelect(most int64) *rankSelect {
	return &rankSelect{counts: make([]int64, 1<<16), lo: make([]uint64, 1<<16), hi: make([]uint64, 1<<16), most: most}
}

// key orders floats as slices.Sort does, as unsigned integers: NaNs
// first, then the negative values from -Inf (their bits inverted), then
// the others (their sign bit set).
func key(v float64) uint64 {
	if math.IsNaN(v) {
		return 0
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// add sees a value in the pass under way.
func (r *rankSelect) add(v float64) {
	kv := key(v)
	if r.bits > 0 && kv>>(64-r.bits) != r.prefix {
		return
	}
	if r.hold {
		r.held = append(r.held, v)
		return
	}
	b := kv << r.bits >> 48
	if r.counts[b] == 0 {
		r.lo[b], r.hi[b] = kv, kv
	}
	r.counts[b]++
	r.lo[b], r.hi[b] = min(r.lo[b], kv), max(r.hi[b], kv)
}

// pass ends a pass; it reports whether the value is found.
func (r *rankSelect) pass() bool {
	if r.hold {
		slices.SortFunc(r.held, func(a, b float64) int { return cmp.Compare(key(a), key(b)) })
		r.value, r.found = r.held[r.k], true
		r.held = nil
		return true
	}
	for b, n := range r.counts {
		if r.k < n {
			if r.lo[b] == r.hi[b] { // all the bucket's values are one
				r.value, r.found = fromKey(r.lo[b]), true
				return true
			}
			r.prefix, r.bits = r.prefix<<16|uint64(b), r.bits+16
			r.hold = n <= r.most
			break
		}
		r.k -= n
	}
	clear(r.counts)
	return false
}

// fromKey is the float of a key.
func fromKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	if k == 0 {
		return math.NaN()
	}
	return math.Float64frombits(^k)
}
