package jpet

import (
	"fmt"
	"math"
)

// Scanner is the detector and image geometry.
type Scanner struct {
	R, L    float64 // half distance between the strips, strip length
	Pixel   float64 // pixel size
	NZ, NY  int     // image size; 0 gives ceil(L/Pixel) x ceil(2R/Pixel)
	SigmaZ  float64 // resolution of z_u and z_d
	SigmaDL float64 // resolution of dl
}

// PaperScanner is the set-up of the paper: R = 0.125 m (the authors'
// file uses 0.125 where the text says 130 mm), L = 0.3 m, 4 mm pixels,
// sigma_z = 10 mm, sigma_dl = 40 mm.
func PaperScanner() Scanner {
	return Scanner{R: 0.125, L: 0.3, Pixel: 0.004, SigmaZ: 0.01, SigmaDL: 0.04}
}

// WithDefaults fills the image size.
func (s Scanner) WithDefaults() Scanner {
	if s.NZ == 0 && s.Pixel > 0 {
		s.NZ = int(math.Ceil(s.L/s.Pixel - 1e-9))
	}
	if s.NY == 0 && s.Pixel > 0 {
		s.NY = int(math.Ceil(2*s.R/s.Pixel - 1e-9))
	}
	return s
}

// Validate reports an unusable geometry.
func (s Scanner) Validate() error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"R", s.R}, {"L", s.L}, {"pixel", s.Pixel}, {"sigma_z", s.SigmaZ}, {"sigma_dl", s.SigmaDL}} {
		if !(v.v > 0) || math.IsInf(v.v, 0) {
			return fmt.Errorf("jpet: %s = %v must be positive and finite", v.name, v.v)
		}
	}
	if s.NZ < 1 || s.NY < 1 || s.NZ*s.NY > 1<<26 {
		return fmt.Errorf("jpet: image %d x %d pixels out of range", s.NZ, s.NY)
	}
	return nil
}

// PixelCentre returns the (z, y) centre of pixel (iz, iy).
func (s Scanner) PixelCentre(iz, iy int) (z, y float64) {
	return -float64(s.NZ)*s.Pixel/2 + s.Pixel/2 + float64(iz)*s.Pixel,
		float64(s.NY)*s.Pixel/2 - s.Pixel/2 - float64(iy)*s.Pixel
}

// Event is a measured coincidence.
type Event struct{ ZU, ZD, DL float64 }

// Point is an emission point with the tangent of its line of response.
type Point struct{ Z, Y, Tan float64 }

// Reconstruct returns the direct reconstruction of an event.
func (s Scanner) Reconstruct(e Event) Point {
	tan := (e.ZU - e.ZD) / (2 * s.R)
	y := -0.5 * e.DL / math.Sqrt(1+tan*tan)
	return Point{Z: 0.5 * (e.ZU + e.ZD + 2*y*tan), Y: y, Tan: tan}
}

// Project returns the exact event of an emission.
func (s Scanner) Project(p Point) Event {
	return Event{ZU: p.Z + (s.R-p.Y)*p.Tan, ZD: p.Z - (s.R+p.Y)*p.Tan, DL: -2 * p.Y * math.Sqrt(1+p.Tan*p.Tan)}
}

// Accepted reports whether both hits lie on the strips.
func (s Scanner) Accepted(e Event) bool {
	return math.Abs(e.ZU) < s.L/2 && math.Abs(e.ZD) < s.L/2
}

// Sensitivity is the probability that a pair emitted at (z, y), with
// directions uniform in angle, hits both strips.
func (s Scanner) Sensitivity(z, y float64) float64 {
	l2, r := s.L/2, s.R
	return (math.Atan(min((l2-z)/(r-y), (l2+z)/(r+y))) -
		math.Atan(max(-(l2+z)/(r-y), (-l2+z)/(r+y)))) / math.Pi
}

// PixelSensitivity averages the sensitivity over a pixel as centre/3 plus
// each corner/6.
func (s Scanner) PixelSensitivity(iz, iy int) float64 {
	z, y := s.PixelCentre(iz, iy)
	h := s.Pixel / 2
	sum := s.Sensitivity(z, y) / 3
	for _, c := range [4][2]float64{{-h, -h}, {-h, h}, {h, -h}, {h, h}} {
		sum += s.Sensitivity(z+c[0], y+c[1]) / 6
	}
	return sum
}
