package jpet

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hitflow/hitflow/internal/textscan"
)

// Ellipse is a region of uniform activity: centre (Z along the strips, Y),
// half-axes A (along z before rotation) and B, rotated counter-clockwise by
// Angle degrees.
type Ellipse struct{ Z, Y, A, B, Angle, Activity float64 }

// rotation is the sine and cosine of the ellipse's angle.
func (e Ellipse) rotation() [2]float64 {
	s, c := math.Sincos(e.Angle * math.Pi / 180)
	return [2]float64{s, c}
}

// contains reports whether (z, y) lies in the ellipse, of the given
// rotation.
func (e Ellipse) contains(z, y float64, rot [2]float64) bool {
	s, c := rot[0], rot[1]
	dz, dy := z-e.Z, y-e.Y
	u, v := dz*c+dy*s, -dz*s+dy*c
	return u*u/(e.A*e.A)+v*v/(e.B*e.B) <= 1
}

// PointSource emits Activity times as much as one unit of area of an
// ellipse of activity 1.
type PointSource struct{ Z, Y, Activity float64 }

// Phantom is an activity distribution. Where ellipses overlap, the one
// listed first gives the activity.
type Phantom struct {
	Ellipses []Ellipse
	Points   []PointSource
}

// PaperPhantom is Appendix A of the paper, in metres.
func PaperPhantom() Phantom {
	mm := func(z, y, a, b, angle, act float64) Ellipse {
		return Ellipse{z / 1000, y / 1000, a / 1000, b / 1000, angle, act}
	}
	return Phantom{Ellipses: []Ellipse{
		mm(0, 0, 30, 60, 0, 0.3),
		mm(50, -62, 10, 33, -40, 0.3),
		mm(-50, -63, 20, 33, 45, 0.5),
		mm(60, 65, 13, 14, 0, 0.5),
		mm(35, 55, 12, 12, 0, 0.7),
		mm(0, 0, 120, 110, 0, 0.1),
	}}
}

// Activity returns the activity density at (z, y) and the index of the
// ellipse that gives it (-1 outside all).
func (p *Phantom) Activity(z, y float64) (float64, int) { return p.activity(z, y, nil) }

// activity is Activity with the ellipses' rotations computed beforehand
// (see rotations), or, with none, as it goes.
func (p *Phantom) activity(z, y float64, rots [][2]float64) (float64, int) {
	for i, e := range p.Ellipses {
		var rot [2]float64
		if rots != nil {
			rot = rots[i]
		} else {
			rot = e.rotation()
		}
		if e.contains(z, y, rot) {
			return e.Activity, i
		}
	}
	return 0, -1
}

// rotations are the rotations of the phantom's ellipses, for activity:
// the many draws of a simulation compute them once.
func (p *Phantom) rotations() [][2]float64 {
	rots := make([][2]float64, len(p.Ellipses))
	for i, e := range p.Ellipses {
		rots[i] = e.rotation()
	}
	return rots
}

// ParsePhantom reads one shape per line: "ellipse z y a b angle activity"
// (the keyword may be left out), or "point z y activity". '#' starts a
// comment.
func ParsePhantom(r io.Reader, name string) (Phantom, error) {
	var p Phantom
	err := eachLine(r, name, func(sc *textscan.Scanner, f [][]byte) error {
		kind := "ellipse"
		if _, ok := textscan.ParseFloat(f[0]); !ok {
			kind, f = strings.ToLower(string(f[0])), f[1:]
		}
		v := make([]float64, len(f))
		if err := finite(sc, v, f); err != nil {
			return err
		}
		switch {
		case kind == "ellipse" && len(v) == 6:
			if !(v[2] > 0 && v[3] > 0) || v[5] < 0 {
				return sc.Errorf("half-axes must be positive and activity not negative")
			}
			// An ellipse's test squares its half-axes: beyond about
			// 1e154 m or below 1e-162 it would contain nothing.
			if a, b := v[2]*v[2], v[3]*v[3]; !(a > 0 && b > 0 && a < math.Inf(1) && b < math.Inf(1)) {
				return sc.Errorf("half-axes %g and %g m: out of any scanner's range (positions are in metres)", v[2], v[3])
			}
			p.Ellipses = append(p.Ellipses, Ellipse{v[0], v[1], v[2], v[3], v[4], v[5]})
		case kind == "point" && len(v) == 3:
			if v[2] < 0 {
				return sc.Errorf("negative activity")
			}
			p.Points = append(p.Points, PointSource{v[0], v[1], v[2]})
		default:
			return sc.Errorf("want \"ellipse z y a b angle activity\" or \"point z y activity\"")
		}
		return nil
	})
	if err != nil {
		return p, err
	}
	if len(p.Ellipses) == 0 && len(p.Points) == 0 {
		return p, fmt.Errorf("jpet: %s: no shapes", name)
	}
	return p, nil
}

// bounds returns the box around all shapes and the largest activity.
func (p *Phantom) bounds() (z0, z1, y0, y1, peak float64) {
	z0, y0, z1, y1 = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, e := range p.Ellipses {
		r := math.Max(e.A, e.B)
		z0, z1, y0, y1 = min(z0, e.Z-r), max(z1, e.Z+r), min(y0, e.Y-r), max(y1, e.Y+r)
		peak = max(peak, e.Activity)
	}
	return
}

// Image rasterises the activity at the pixel centres.
func (p *Phantom) Image(s Scanner) []float64 {
	img := make([]float64, s.NZ*s.NY)
	for iy := range s.NY {
		for iz := range s.NZ {
			z, y := s.PixelCentre(iz, iy)
			img[iy*s.NZ+iz], _ = p.Activity(z, y)
		}
	}
	return img
}
