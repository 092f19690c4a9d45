package pixel

import (
	"math/rand/v2"
	"testing"
)

// TestSteadyStateAllocations: once its buffers have grown, the clusterer
// (and the sorter) allocate nothing per batch, so nothing per hit.
func TestSteadyStateAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var h Hits
	var t0 Time
	for range 1 << 14 {
		t0 += Time(r.IntN(400)) * Nanosecond
		x, y := uint16(1+r.IntN(250)), uint16(1+r.IntN(250))
		h.Append(x, y, t0, 10)
		h.Append(x+1, y, t0+Time(r.IntN(100))*Nanosecond, 10)
	}
	span := t0 + Millisecond
	for _, def := range []Definition{Local, Global, Window} {
		c, _ := NewClusterer(Config{Definition: def, Dt: 200 * Nanosecond, Width: 256, Height: 256})
		c.KeepMembers(true)
		s, _ := NewSorter(500*Microsecond, 0)
		shift := func() {
			for i := range h.ToA {
				h.ToA[i] += span
			}
		}
		for range 3 { // warm up
			shift()
			c.Add(s.Push(&h))
		}
		allocs := testing.AllocsPerRun(20, func() {
			shift()
			c.Add(s.Push(&h))
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per batch of %d hits", def, allocs, h.Len())
		}
	}
}
