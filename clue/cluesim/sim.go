// Package cluesim generates the synthetic calorimeter of the CLUE paper:
// layers of unit-weight points forming circular clusters whose density
// falls as a Gaussian, plus uniform noise, seeded and reproducible.
package cluesim

import (
	"fmt"
	"math/rand/v2"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/internal/prefault"
)

// Options configure the calorimeter. The zero value of a field takes the
// paper's setting.
type Options struct {
	Layers           int     // 100
	PointsPerLayer   int     // 10,000
	PointsPerCluster int     // 50 (so 190 clusters per layer at 10,000 points)
	Sigma            float64 // cluster radius in cm: 3
	NoiseFraction    float64 // 0.05
	HalfSize         float64 // the layer spans [-HalfSize, HalfSize] cm: 250
	Seed             uint64
}

func (o *Options) defaults() error {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Layers, 100)
	def(&o.PointsPerLayer, 10000)
	def(&o.PointsPerCluster, 50)
	if o.Sigma == 0 {
		o.Sigma = 3
	}
	if o.NoiseFraction == 0 {
		o.NoiseFraction = 0.05
	}
	if o.HalfSize == 0 {
		o.HalfSize = 250
	}
	if o.Layers < 0 || o.PointsPerLayer < 0 || o.PointsPerCluster < 1 || !(o.Sigma > 0) || o.NoiseFraction < 0 || o.NoiseFraction > 1 || !(o.HalfSize > 0) {
		return fmt.Errorf("cluesim: invalid options %+v", *o)
	}
	return nil
}

// Generate returns the points, layer by layer. The reused argument, when
// not nil, is filled instead of a new value; new columns are huge pages,
// written whole.
func Generate(o Options, reused *clue.Points) (*clue.Points, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	p := reused
	if p == nil {
		p = &clue.Points{}
	}
	n := o.Layers * o.PointsPerLayer
	p.Coords = p.Coords[:0]
	xs, ys := reuse(p, 0, n), reuse(p, 1, n)
	p.Coords = append(p.Coords, xs, ys)
	p.Layer = resize(p.Layer, n)
	p.Weight = resize(p.Weight, n)
	r := rand.New(rand.NewPCG(o.Seed, 0xC1E))
	noise := int(float64(o.PointsPerLayer)*o.NoiseFraction + 0.5)
	inClusters := o.PointsPerLayer - noise
	i := 0
	for l := range o.Layers {
		var cx, cy float64
		for k := range inClusters {
			if k%o.PointsPerCluster == 0 { // a new cluster, away from the edge
				cx = (2*r.Float64() - 1) * (o.HalfSize - 3*o.Sigma)
				cy = (2*r.Float64() - 1) * (o.HalfSize - 3*o.Sigma)
			}
			xs[i], ys[i] = cx+r.NormFloat64()*o.Sigma, cy+r.NormFloat64()*o.Sigma
			p.Layer[i], p.Weight[i] = int32(l), 1
			i++
		}
		for range noise {
			xs[i], ys[i] = (2*r.Float64()-1)*o.HalfSize, (2*r.Float64()-1)*o.HalfSize
			p.Layer[i], p.Weight[i] = int32(l), 1
			i++
		}
	}
	return p, nil
}

func reuse(p *clue.Points, d, n int) []float64 {
	if d < cap(p.Coords) {
		if c := p.Coords[:d+1][d]; cap(c) >= n {
			return c[:n]
		}
	}
	return prefault.Make[float64](n, 0)
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return prefault.Make[T](n, 0)
	}
	return s[:n]
}
