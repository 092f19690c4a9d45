package tpx3

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// Calibration converts ToT (25 ns ticks) to energy (keV) per pixel with the
// surrogate function ToT = a*E + b - c/(E - t), solved for the larger root
// of a*E^2 + (b - a*t - ToT)*E + (ToT*t - b*t - c) = 0.
type Calibration struct {
	Width, Height int
	A, B, C, T    []float64 // row-major, index y*Width + x
	valid         []bool
	InvalidPixels int // pixels with a == 0 or a non-finite constant

	InvalidHits int64 // hits given zero energy: invalid pixel, outside the matrix, or no real root in [0, pixel.MaxEnergy)
	OutsideHits int64 // of them, the hits on pixels beyond the matrix (a chip's matrix on a larger layout, or the wrong files)
}

// LoadCalibration reads a.txt, b.txt, c.txt and t.txt from dir: each a
// matrix of space-separated numbers, one row per y. CRLF line ends and
// trailing spaces are accepted; all four must have the same shape.
func LoadCalibration(dir string) (*Calibration, error) {
	cal := &Calibration{}
	for i, dst := range []*[]float64{&cal.A, &cal.B, &cal.C, &cal.T} {
		name := filepath.Join(dir, string("abct"[i])+".txt")
		m, w, h, err := readMatrix(name)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			cal.Width, cal.Height = w, h
		} else if w != cal.Width || h != cal.Height {
			return nil, fmt.Errorf("calib: %s: %dx%d values, but a.txt has %dx%d", name, w, h, cal.Width, cal.Height)
		}
		*dst = m
	}
	cal.valid = make([]bool, len(cal.A))
	for p := range cal.A {
		ok := cal.A[p] != 0
		for _, v := range [...]float64{cal.A[p], cal.B[p], cal.C[p], cal.T[p]} {
			ok = ok && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		cal.valid[p] = ok
		if !ok {
			cal.InvalidPixels++
		}
	}
	return cal, nil
}

func readMatrix(name string) (m []float64, w, h int, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("calib: %w", err)
	}
	defer f.Close()
	return parseMatrix(f, name)
}

// parseMatrix reads a matrix of a calibration file from r; name is for
// errors.
func parseMatrix(r io.Reader, name string) (m []float64, w, h int, err error) {
	sc := textscan.New(r, name, "calib")
	var fields [][]byte
	for line := range sc.Lines() {
		fields = textscan.Fields(fields, line, ' ')
		if len(fields) == 0 {
			continue
		}
		if w == 0 {
			w = len(fields)
		} else if len(fields) != w {
			return nil, 0, 0, sc.Errorf("%d values, want %d", len(fields), w)
		}
		for i, fl := range fields {
			v, ok := textscan.ParseFloat(fl)
			if !ok {
				return nil, 0, 0, sc.Errorf("value %d %q is not a number", i+1, fl)
			}
			m = append(m, v)
		}
		h++
	}
	if err := sc.Err(); err != nil {
		return nil, 0, 0, err
	}
	if h == 0 {
		return nil, 0, 0, fmt.Errorf("calib: %s: no values", name)
	}
	return m, w, h, nil
}

// Energy returns the energy in keV of a ToT on pixel (x, y), and false
// when the pixel is invalid, outside the matrix, or has no real root in
// [0, pixel.MaxEnergy).
func (c *Calibration) Energy(x, y int, tot float64) (float64, bool) {
	if x < 0 || y < 0 || x >= c.Width || y >= c.Height {
		return 0, false
	}
	p := y*c.Width + x
	if !c.valid[p] {
		return 0, false
	}
	a, b, cc, t := c.A[p], c.B[p], c.C[p], c.T[p]
	bq := b - a*t - tot
	cq := tot*t - b*t - cc
	disc := bq*bq - 4*a*cq
	if disc < 0 {
		return 0, false
	}
	s := math.Sqrt(disc)
	e := max((-bq+s)/(2*a), (-bq-s)/(2*a))
	if !(e >= 0 && e < pixel.MaxEnergy) { // constants far from any sensor's
		return 0, false
	}
	return e, true
}

// Apply fills the energies of a batch; hits without a valid energy get
// zero and are counted in InvalidHits, and those beyond the matrix in
// OutsideHits too.
func (c *Calibration) Apply(h *pixel.Hits) {
	h.E = h.E[:0]
	for i := range h.ToA {
		x, y := int(h.X[i]), int(h.Y[i])
		e, ok := c.Energy(x, y, float64(h.ToT[i]))
		if !ok {
			c.InvalidHits++
			if x >= c.Width || y >= c.Height {
				c.OutsideHits++
			}
		}
		h.E = append(h.E, float32(e))
	}
}
