package analysis

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// Class is a morphology class of pixel-detector clusters, the six
// classic ones (after Holy et al., NIM A 591 (2008) 287).
type Class uint8

const (
	Dot           Class = iota // a few pixels: X-rays, low-energy electrons
	SmallBlob                  // round, thin, small: electrons stopping at once
	CurlyTrack                 // thin, neither round and small nor straight: electrons
	HeavyBlob                  // round with inner pixels: alphas and ions head on
	HeavyTrack                 // long with inner pixels: protons, ions at an angle
	StraightTrack              // long, thin, straight: minimum ionising particles
)

var classNames = [...]string{"dot", "small_blob", "curly_track", "heavy_blob", "heavy_track", "straight_track"}

// Classes lists every class, in order.
var Classes = []Class{Dot, SmallBlob, CurlyTrack, HeavyBlob, HeavyTrack, StraightTrack}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// ParseClass reads a class name (as String writes it).
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if strings.EqualFold(s, n) {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("unknown cluster class %q (want %s)", s, strings.Join(classNames[:], ", "))
}

// Rules are the thresholds of Classify.
type Rules struct {
	DotPixels       int32   // at most this many pixels: a dot
	HeavyInner      int32   // at least this many inner pixels: heavy
	RoundMin        float64 // roundness at least this: a blob
	SmallBlobPixels int32   // a thin blob of at most this many pixels: small (more: a curled track)
	StraightWidth   float64 // a thin long cluster at most this wide: straight
}

// DefaultRules are the thresholds used unless a rules file says
// otherwise.
var DefaultRules = Rules{DotPixels: 4, HeavyInner: 4, RoundMin: 0.5, SmallBlobPixels: 12, StraightWidth: 3}

// Classify gives the class of a shape:
//
//	pixels <= DotPixels                                      dot
//	inner >= HeavyInner, roundness >= RoundMin               heavy blob
//	inner >= HeavyInner                                      heavy track
//	roundness >= RoundMin, pixels <= SmallBlobPixels         small blob
//	roundness < RoundMin, width <= StraightWidth             straight track
//	otherwise                                                curly track
func (r Rules) Classify(s Shape) Class {
	round := s.Roundness >= r.RoundMin
	switch {
	case s.Pixels <= r.DotPixels:
		return Dot
	case s.Inner >= r.HeavyInner && round:
		return HeavyBlob
	case s.Inner >= r.HeavyInner:
		return HeavyTrack
	case round && s.Pixels <= r.SmallBlobPixels:
		return SmallBlob
	case !round && s.Width <= r.StraightWidth:
		return StraightTrack
	}
	return CurlyTrack
}

// ReadRules reads thresholds as lines "name value" (dot_pixels,
// heavy_inner, round_min, small_blob_pixels, straight_width) over the
// defaults; # starts a comment. name is used in errors.
func ReadRules(r io.Reader, name string) (Rules, error) {
	rules := DefaultRules
	fields := map[string]any{
		"dot_pixels": &rules.DotPixels, "heavy_inner": &rules.HeavyInner, "round_min": &rules.RoundMin,
		"small_blob_pixels": &rules.SmallBlobPixels, "straight_width": &rules.StraightWidth,
	}
	sc := textscan.New(r, name, "classes")
	for line := range sc.Lines() {
		text, _, _ := strings.Cut(string(line), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return rules, sc.Errorf("want \"name value\", got %q", line)
		}
		dst, ok := fields[f[0]]
		if !ok {
			return rules, sc.Errorf("unknown threshold %q (want dot_pixels, heavy_inner, round_min, small_blob_pixels or straight_width)", f[0])
		}
		ok = false
		switch p := dst.(type) {
		case *int32:
			v, err := strconv.ParseInt(f[1], 10, 32)
			if ok = err == nil && v >= 0; ok {
				*p = int32(v)
			}
		case *float64:
			v, err := strconv.ParseFloat(f[1], 64)
			if ok = err == nil && v >= 0 && !math.IsInf(v, 1); ok {
				*p = v
			}
		}
		if !ok {
			return rules, sc.Errorf("%s %q is not a non-negative number", f[0], f[1])
		}
	}
	if err := sc.Err(); err != nil {
		return rules, err
	}
	return rules, nil
}

// Filter describes the morphology of every cluster (see
// Shaper.Describe) and keeps those of some classes: the online data
// reduction of a run that writes only what it is after.
type Filter struct {
	Rules Rules
	Keep  [len(classNames)]bool // by class

	shaper  Shaper
	keep    []bool
	out     pixel.Clusters
	Dropped [len(classNames)]int64 // clusters dropped so far, by class
}

// KeepAll makes the filter keep every class: the shapes alone.
func (f *Filter) KeepAll() {
	for i := range f.Keep {
		f.Keep[i] = true
	}
}

// Apply sets the morphology columns of c and returns the clusters whose
// class is kept, members and columns included: c itself when it keeps
// them all, else a batch valid until the next call. c must carry its
// members.
func (f *Filter) Apply(c *pixel.Clusters) (*pixel.Clusters, error) {
	if err := f.shaper.Describe(c, f.Rules); err != nil {
		return nil, err
	}
	f.keep = f.keep[:0]
	all := true
	for _, class := range c.Class {
		k := f.Keep[class]
		f.keep = append(f.keep, k)
		if !k {
			f.Dropped[class]++
			all = false
		}
	}
	if all {
		return c, nil
	}
	f.out.Reset()
	f.out.AppendSelected(c, f.keep)
	return &f.out, nil
}
