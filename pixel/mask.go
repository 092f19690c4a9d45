package pixel

import "fmt"

// Mask is a set of pixels whose hits are dropped before clustering: noisy
// pixels, and hot ones, which fire faster than dt and make a cluster that
// never ends. The hits it drops are counted by the caller, never silently
// lost (see [Mask.Filter]).
type Mask struct {
	width, height int
	bits          []uint64 // bit y*width+x
	pixels        int
}

// NewMask returns an empty mask of a width x height sensor.
func NewMask(width, height int) (*Mask, error) {
	if width < 1 || height < 1 || width > 1<<16 || height > 1<<16 {
		return nil, fmt.Errorf("pixel: mask size %dx%d out of range 1..65536", width, height)
	}
	return &Mask{width: width, height: height, bits: make([]uint64, (width*height+63)/64)}, nil
}

// Size returns the sensor size the mask was made for.
func (m *Mask) Size() (width, height int) { return m.width, m.height }

// Pixels returns the number of masked pixels.
func (m *Mask) Pixels() int { return m.pixels }

// Set masks pixel (x, y), which must be on the sensor.
func (m *Mask) Set(x, y int) error {
	if x < 0 || y < 0 || x >= m.width || y >= m.height {
		return fmt.Errorf("pixel: pixel (%d, %d) is outside the %dx%d mask", x, y, m.width, m.height)
	}
	p := y*m.width + x
	if m.bits[p/64]&(1<<(p%64)) == 0 {
		m.bits[p/64] |= 1 << (p % 64)
		m.pixels++
	}
	return nil
}

// Has reports whether pixel (x, y) is masked; pixels outside the sensor
// are not.
func (m *Mask) Has(x, y int) bool {
	if x < 0 || y < 0 || x >= m.width || y >= m.height {
		return false
	}
	p := y*m.width + x
	return m.bits[p/64]&(1<<(p%64)) != 0
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
	if int(x) >= m.width || int(y) >= m.height {
		return false
	}
	p := uint(y)*uint(m.width) + uint(x)
	return m.bits[p/64]&(1<<(p%64)) != 0
}
