// Package parts runs a loop over a range in parts on several goroutines,
// for the plain per-element passes (copies, gathers, scans) whose cost
// is memory traffic and page faults rather than arithmetic.
package parts

import (
	"runtime"
	"sync"
)

// Run calls f for consecutive parts [lo, hi) covering [0, n), on up to
// workers goroutines (0: GOMAXPROCS), no part shorter than least (one
// part, on the caller's goroutine, when n is below twice that), and
// returns when every call has.
func Run(n, workers, least int, f func(part, lo, hi int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	k := Count(n, workers, least)
	if k == 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range k {
		wg.Go(func() { f(p, p*n/k, (p+1)*n/k) })
	}
	wg.Wait()
}

// Count is how many parts Run cuts n into.
func Count(n, workers, least int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(workers, n/max(least, 1)))
}
