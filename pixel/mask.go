package pixel

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
)

// Mask is a set of pixels whose hits are dropped before clustering: noisy
// pixels, and hot ones, which fire faster than dt and make a cluster that
// never ends. The hits it drops are counted by the caller, never silently
// lost (see [Mask.Filter]).
type Mask struct {
	width, height int
	bits          []uint64 // bit y*width+x
}

// NewMask returns an empty mask of a width x height sensor.
func NewMask(width, height int) (*Mask, error) {
	if err := checkSensor(width, height); err != nil {
		return nil, err
	}
	return &Mask{width: width, height: height, bits: make([]uint64, (width*height+63)/64)}, nil
}

// Size returns the sensor size the mask was made for.
func (m *Mask) Size() (width, height int) { return m.width, m.height }

// Pixels returns the number of masked pixels.
func (m *Mask) Pixels() int {
	n := 0
	for _, b := range m.bits {
		n += bits.OnesCount64(b)
	}
	return n
}

// Set masks pixel (x, y), which must be on the sensor.
func (m *Mask) Set(x, y int) error {
	if x < 0 || y < 0 || x >= m.width || y >= m.height {
		return fmt.Errorf("pixel: pixel (%d, %d) is outside the %dx%d mask", x, y, m.width, m.height)
	}
	p := y*m.width + x
	m.bits[p/64] |= 1 << (p % 64)
	return nil
}

// Has reports whether pixel (x, y) is masked; pixels outside the sensor
// are not.
func (m *Mask) Has(x, y int) bool {
	return x >= 0 && y >= 0 && x < m.width && y < m.height && m.bit(y*m.width+x)
}

// Filter removes the hits on masked pixels from h, keeping the order of
// the others (and their energies), and returns how many it removed. Hits
// outside the sensor stay, for the clusterer to count as out of range.
func (m *Mask) Filter(h *Hits) int {
	xs, ys := h.X, h.Y[:len(h.X)]
	// Most batches lose nothing: they are only read until the first
	// masked hit, from which on the kept ones move down.
	i := 0
	for ; i < len(xs) && !m.has(xs[i], ys[i]); i++ {
	}
	if i == len(xs) {
		return 0
	}
	ts, tots := h.ToA[:len(xs)], h.ToT[:len(xs)]
	var es []float32
	if h.Calibrated() {
		es = h.E[:len(xs)]
	}
	k := i
	for j := i + 1; j < len(xs); j++ {
		if m.has(xs[j], ys[j]) {
			continue
		}
		xs[k], ys[k], ts[k], tots[k] = xs[j], ys[j], ts[j], tots[j]
		if es != nil {
			es[k] = es[j]
		}
		k++
	}
	h.X, h.Y, h.ToA, h.ToT = xs[:k], ys[:k], ts[:k], tots[:k]
	if es != nil {
		h.E = es[:k]
	}
	return len(xs) - k
}

// has is Has for the coordinates of a hit.
func (m *Mask) has(x, y uint16) bool {
	return int(x) < m.width && int(y) < m.height && m.bit(int(y)*m.width+int(x))
}

// bit reports whether the pixel at index p (y*width+x) is masked.
func (m *Mask) bit(p int) bool { return m.bits[p/64]&(1<<(p%64)) != 0 }

// HitCounts counts the hits of each pixel of a sensor: the hit map from
// which hot and noisy pixels are found for a [Mask].
type HitCounts struct {
	width, height int
	n             []int64 // index y*width+x
}

// NewHitCounts returns zero counts for a width x height sensor.
func NewHitCounts(width, height int) (*HitCounts, error) {
	if err := checkSensor(width, height); err != nil {
		return nil, err
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

// Size returns the sensor size.
func (c *HitCounts) Size() (width, height int) { return c.width, c.height }

// Count returns the hits counted on pixel (x, y), 0 outside the sensor.
func (c *HitCounts) Count(x, y int) int64 {
	if x < 0 || y < 0 || x >= c.width || y >= c.height {
		return 0
	}
	return c.n[y*c.width+x]
}

// Fired returns the smallest rectangle holding every pixel with a hit,
// and false when none has one: the part of the sensor the data used.
func (c *HitCounts) Fired() (x0, y0, x1, y1 int, ok bool) {
	x0, y0, x1, y1 = c.width, c.height, -1, -1
	for i, n := range c.n {
		if n > 0 {
			x, y := i%c.width, i/c.width
			x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
		}
	}
	return x0, y0, x1, y1, x1 >= 0
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
