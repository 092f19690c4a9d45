package clue

import (
	"fmt"
	"math"
	"strings"
)

// KernelKind names a density kernel.
type KernelKind uint8

// Density kernels. chi(self) is 1 for all of them.
const (
	Flat        KernelKind = iota // chi = 1 (the paper's code)
	CMS                           // chi = 0.5 for every other point (CMS HGCAL)
	Gaussian                      // chi = Amp * exp(-d^2 / (2 Param^2)), Param the std
	Exponential                   // chi = Amp * exp(-Param * d)
)

var kernelNames = [...]string{Flat: "flat", CMS: "cms", Gaussian: "gaussian", Exponential: "exponential"}

func (k KernelKind) String() string {
	if int(k) < len(kernelNames) {
		return kernelNames[k]
	}
	return fmt.Sprintf("KernelKind(%d)", k)
}

// Kernel weighs the neighbours of a point in its density.
type Kernel struct {
	Kind  KernelKind
	Param float64 // the gaussian's std or the exponential's rate
	Amp   float64
}

// FlatKernel is the paper's kernel.
func FlatKernel() Kernel { return Kernel{Kind: Flat} }

// CMSKernel is the CMS HGCAL kernel.
func CMSKernel() Kernel { return Kernel{Kind: CMS} }

// GaussianKernel is amp * exp(-d^2/(2 std^2)).
func GaussianKernel(std, amp float64) Kernel { return Kernel{Gaussian, std, amp} }

// ExponentialKernel is amp * exp(-avg*d).
func ExponentialKernel(avg, amp float64) Kernel { return Kernel{Exponential, avg, amp} }

// ParseKernel reads "flat", "cms", "gaussian[:std[:amp]]" or
// "exponential[:avg[:amp]]"; missing parameters default to std = dc/2
// (avg = 2/dc) and amp = 1.
func ParseKernel(s string, dc float64) (Kernel, error) {
	name, rest, _ := strings.Cut(s, ":")
	var vals []float64
	if rest != "" {
		for _, f := range strings.Split(rest, ":") {
			var v float64
			if _, err := fmt.Sscan(f, &v); err != nil {
				return Kernel{}, fmt.Errorf("clue: kernel %q: parameter %q is not a number", s, f)
			}
			vals = append(vals, v)
		}
	}
	param := func(i int, def float64) float64 {
		if i < len(vals) {
			return vals[i]
		}
		return def
	}
	var k Kernel
	switch strings.ToLower(name) {
	case "flat":
		k = FlatKernel()
	case "cms":
		k = CMSKernel()
	case "gaussian":
		k = GaussianKernel(param(0, dc/2), param(1, 1))
	case "exponential":
		k = ExponentialKernel(param(0, 2/dc), param(1, 1))
	default:
		return Kernel{}, fmt.Errorf("clue: unknown kernel %q (want flat, cms, gaussian or exponential)", s)
	}
	if (k.Kind == Flat || k.Kind == CMS) && len(vals) > 0 || len(vals) > 2 {
		return Kernel{}, fmt.Errorf("clue: kernel %q: too many parameters", s)
	}
	return k, k.validate()
}

func (k Kernel) validate() error {
	switch k.Kind {
	case Flat, CMS:
		return nil
	case Gaussian, Exponential:
		if !(k.Param > 0) || math.IsInf(k.Param, 0) || !(k.Amp >= 0) || math.IsInf(k.Amp, 0) {
			return fmt.Errorf("clue: %v kernel needs a positive finite parameter and amplitude, got %v, %v", k.Kind, k.Param, k.Amp)
		}
		return nil
	}
	return fmt.Errorf("clue: unknown kernel kind %d", k.Kind)
}

// chi is the kernel's weight of another point at distance d.
func (k Kernel) chi(d float64) float64 {
	switch k.Kind {
	case CMS:
		return 0.5
	case Gaussian:
		return k.Amp * exp(-d*d/(2*k.Param*k.Param))
	case Exponential:
		return k.Amp * exp(-k.Param*d)
	}
	return 1
}

// Params are CLUE's parameters.
type Params struct {
	DC     float64 // density cut-off distance
	RhoC   float64 // density threshold of seeds
	DeltaC float64 // minimum separation of a seed
	DeltaO float64 // minimum separation of an outlier
	Kernel Kernel
	// TileSize is the grid's tile size; 0 picks dm (enlarged when the
	// extent would need more than about four tiles per point). Along the
	// first coordinate the index cuts the tiles up to four times narrower
	// when memory allows (see the package doc); results do not depend on
	// the tile size.
	TileSize float64
}

// DM is the nearest-higher search radius, max(DeltaC, DeltaO).
func (p Params) DM() float64 { return math.Max(p.DeltaC, p.DeltaO) }

// Validate reports parameters CLUE cannot run with.
func (p Params) Validate() error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"dc", p.DC}, {"deltac", p.DeltaC}, {"deltao", p.DeltaO}} {
		if !(v.v > 0) || math.IsInf(v.v, 0) {
			return fmt.Errorf("clue: %s = %v must be positive and finite", v.name, v.v)
		}
	}
	if math.IsNaN(p.RhoC) || math.IsInf(p.RhoC, 0) {
		return fmt.Errorf("clue: rhoc = %v must be finite", p.RhoC)
	}
	if p.TileSize < 0 || math.IsNaN(p.TileSize) || math.IsInf(p.TileSize, 0) {
		return fmt.Errorf("clue: tile size %v must be positive or 0 (automatic)", p.TileSize)
	}
	return p.Kernel.validate()
}

// threshold returns the largest float64 t such that sqrt(t) <= r, so that
// comparing squared distances with t decides exactly what comparing the
// distances with r would.
func threshold(r float64) float64 {
	t := r * r
	for math.Sqrt(t) > r {
		t = math.Nextafter(t, 0)
	}
	for n := math.Nextafter(t, math.Inf(1)); math.Sqrt(n) <= r; n = math.Nextafter(t, math.Inf(1)) {
		t = n
	}
	return t
}
