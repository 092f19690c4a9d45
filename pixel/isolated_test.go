package pixel

import (
	"math/rand/v2"
	"testing"
)

// edgeCoords are coordinates where the halves of pixelsApart's word could
// borrow or carry into each other if the lift were wrong.
var edgeCoords = []uint16{0, 1, 2, 3, 4, 127, 128, 255, 256, 257, 1<<15 - 1, 1 << 15, 1<<16 - 4, 1<<16 - 3, 1<<16 - 2, 1<<16 - 1}

// TestPixelsApart: zero exactly for 8-neighbours (or the same pixel), on
// every pair of edge coordinates and on random ones.
func TestPixelsApart(t *testing.T) {
	near := func(a, b uint16) bool { return int(a)-int(b) <= 1 && int(b)-int(a) <= 1 }
	check := func(x1, y1, x2, y2 uint16) {
		got := pixelsApart(pixelWord(x1, y1)+pixelLift, pixelWord(x2, y2))
		if want := near(x1, x2) && near(y1, y2); (got == 0) != want || got >= 1<<63 {
			t.Fatalf("(%d,%d) and (%d,%d): %#x, neighbours %v", x1, y1, x2, y2, got, want)
		}
	}
	for _, x1 := range edgeCoords {
		for _, x2 := range edgeCoords {
			for _, y1 := range edgeCoords {
				for _, y2 := range edgeCoords {
					check(x1, y1, x2, y2)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		x1, y1 := uint16(r.Uint32()), uint16(r.Uint32())
		// Half the pairs close, so that both outcomes are common.
		x2, y2 := x1+uint16(r.IntN(5))-2, y1+uint16(r.IntN(5))-2
		if r.IntN(2) == 0 {
			x2, y2 = uint16(r.Uint32()), uint16(r.Uint32())
		}
		check(x1, y1, x2, y2)
	}
}

// TestLinkLocal: linkLocal's clusters of a group are the connected
// components of the graph of neighbours at most dt apart, found by a
// plain search over that graph, on random groups of every size up to
// isolatedMax: on one pixel, in a few pixels, at both ends of the
// coordinate range (0 and 65535 are not neighbours), with equal times and
// with times far apart.
func TestLinkLocal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for seed := range 20000 {
		n := 1 + seed%isolatedMax
		dt := Time(r.IntN(4)) * 50
		base := [2]uint16{uint16(r.IntN(4)), 1<<16 - 4}[r.IntN(2)]
		spread := 1 + r.IntN(5)
		xs, ys, ts := make([]uint16, n), make([]uint16, n), make([]Time, n)
		var at Time
		for q := range n {
			xs[q], ys[q] = base+uint16(r.IntN(spread)), base+uint16(r.IntN(spread))
			at += Time(r.IntN(3)) * Time(r.IntN(100))
			ts[q] = at
		}
		sets, firsts := linkLocal(xs, ys, ts, dt)

		linked := func(p, q int) bool {
			dx, dy, d := int(xs[p])-int(xs[q]), int(ys[p])-int(ys[q]), ts[q]-ts[p]
			return dx >= -1 && dx <= 1 && dy >= -1 && dy <= 1 && d <= dt && -d <= dt
		}
		seen := make([]bool, n)
		var wantFirsts uint16
		for r0 := range n {
			if seen[r0] {
				continue
			}
			wantFirsts |= 1 << r0
			var set uint16
			stack := []int{r0}
			seen[r0] = true
			for len(stack) > 0 {
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				set |= 1 << p
				for q := range n {
					if !seen[q] && linked(p, q) {
						seen[q] = true
						stack = append(stack, q)
					}
				}
			}
			if sets[r0] != set {
				t.Fatalf("seed %d (n %d, dt %d): cluster of hit %d is %016b, want %016b\nx %v\ny %v\nt %v", seed, n, dt, r0, sets[r0], set, xs, ys, ts)
			}
		}
		if firsts != wantFirsts {
			t.Fatalf("seed %d: first hits %016b, want %016b", seed, firsts, wantFirsts)
		}
	}
}
