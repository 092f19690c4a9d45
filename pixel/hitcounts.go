package pixel

import (
	"cmp"
	"fmt"
	"slices"
)

// HitCounts counts the hits of each pixel of a sensor: the hit map from
// which hot and noisy pixels are found for a [Mask].
type HitCounts struct {
	width, height int
	n             []int64 // index y*width+x
}

// NewHitCounts returns zero counts for a width x height sensor.
func NewHitCounts(width, height int) (*HitCounts, error) {
	if width < 1 || height < 1 || width > 1<<16 || height > 1<<16 {
		return nil, fmt.Errorf("pixel: sensor size %dx%d out of range 1..65536", width, height)
	}
	return &HitCounts{width: width, height: height, n: make([]int64, width*height)}, nil
}

// Add counts the hits of h and returns how many were outside the sensor,
// which it does not count.
func (c *HitCounts) Add(h *Hits) (outside int64) {
	ys := h.Y[:len(h.X)]
	for i, x := range h.X {
		y := ys[i]
		if int(x) >= c.width || int(y) >= c.height {
			outside++
			continue
		}
		c.n[int(y)*c.width+int(x)]++
	}
	return outside
}

// Count returns the hits counted on pixel (x, y), 0 outside the sensor.
func (c *HitCounts) Count(x, y int) int64 {
	if x < 0 || y < 0 || x >= c.width || y >= c.height {
		return 0
	}
	return c.n[y*c.width+x]
}

// PixelHits is a pixel and its hits.
type PixelHits struct {
	X, Y int
	Hits int64
}

// Hot returns the pixels with at least least hits and more than factor
// times the median of the pixels that fired, the most hits first (then by
// y and x), and that median. A hot pixel (a few among thousands) barely
// moves the median, unlike the mean, which one pixel firing millions of
// times would raise above the rest.
func (c *HitCounts) Hot(factor float64, least int64) (hot []PixelHits, median float64) {
	var fired []int64
	for _, n := range c.n {
		if n > 0 {
			fired = append(fired, n)
		}
	}
	if len(fired) == 0 {
		return nil, 0
	}
	slices.Sort(fired)
	median = float64(fired[len(fired)/2])
	if len(fired)%2 == 0 {
		median = (float64(fired[len(fired)/2-1]) + median) / 2
	}
	for p, n := range c.n {
		if n >= least && float64(n) > factor*median {
			hot = append(hot, PixelHits{X: p % c.width, Y: p / c.width, Hits: n})
		}
	}
	slices.SortStableFunc(hot, func(a, b PixelHits) int { return cmp.Compare(b.Hits, a.Hits) })
	return hot, median
}
