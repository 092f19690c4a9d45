package parts

import (
	"sync"
	"testing"
)

// TestRun: the parts cover [0, n) once each, in order of their numbers,
// none shorter than least unless there is only one, at most workers.
func TestRun(t *testing.T) {
	for _, c := range []struct{ n, workers, least, parts int }{
		{0, 4, 10, 1}, {5, 4, 10, 1}, {19, 4, 10, 1}, {20, 4, 10, 2}, {100, 4, 10, 4}, {1000, 3, 1, 3}, {7, 8, 0, 7},
	} {
		var mu sync.Mutex
		seen := make([]int, c.n)
		got := map[int][2]int{}
		Run(c.n, c.workers, c.least, func(part, lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			got[part] = [2]int{lo, hi}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		if len(got) != c.parts || Count(c.n, c.workers, c.least) != c.parts {
			t.Fatalf("%+v: %d parts, Count %d", c, len(got), Count(c.n, c.workers, c.least))
		}
		for p := range c.parts {
			r := got[p]
			if p > 0 && r[0] != got[p-1][1] || c.parts > 1 && r[1]-r[0] < c.least {
				t.Fatalf("%+v: part %d is %v", c, p, r)
			}
		}
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("%+v: index %d done %d times", c, i, k)
			}
		}
	}
}
