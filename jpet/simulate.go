package jpet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/hitflow/hitflow/internal/prefault"
)

// SimOptions configure a simulation; see [SimOptions.Validate].
type SimOptions struct {
	Emissions int
	Seed      uint64
	MaxAngle  float64 // emission angles uniform in (-MaxAngle, MaxAngle); 0 gives pi/4
	Workers   int
	// Progress, when set, is called with the number of emissions simulated
	// so far, after each block of them, one call at a time.
	Progress func(done int)
}

// Simulation is the output of Simulate.
type Simulation struct {
	Events   []Event   // detected, with resolution
	Emitted  []float64 // true emission counts per pixel
	Detected []float64 // emission counts of the detected events per pixel
	Naive    []float64 // direct reconstruction: counts per pixel of the reconstructed points
	Outside  int       // emissions outside the image (in Emitted nowhere), detected or not
}

// simBlock is the number of emissions with one random stream, so that the
// result does not depend on the number of workers.
const simBlock = 1 << 14

// Simulate emits pairs from the phantom (positions drawn exactly by
// rejection from its activity), angles uniform, exact hits, acceptance when
// both hits are on the strips, then Gaussian resolution on z_u, z_d (sigma_z)
// and dl (sigma_dl). Seeded and reproducible for any number of workers.
// Once ctx is done it stops and returns ctx's error.
func Simulate(ctx context.Context, s Scanner, ph Phantom, opt SimOptions) (*Simulation, error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	maxAngle := opt.MaxAngle
	if maxAngle == 0 {
		maxAngle = math.Pi / 4
	}
	z0, z1, y0, y1, peak := ph.bounds()
	rots := ph.rotations()
	// Point sources take a share of the emissions by their activity
	// against the ellipses' integrated activity (on a fine grid).
	var areaActivity float64
	if len(ph.Ellipses) > 0 {
		const n = 1000
		dz, dy := (z1-z0)/n, (y1-y0)/n
		for i := range n {
			for j := range n {
				a, _ := ph.activity(z0+(float64(i)+0.5)*dz, y0+(float64(j)+0.5)*dy, rots)
				areaActivity += a * dz * dy
			}
		}
	}
	var pointTotal float64
	for _, p := range ph.Points {
		pointTotal += p.Activity
	}
	if areaActivity+pointTotal <= 0 {
		return nil, fmt.Errorf("jpet: the phantom has no activity")
	}
	pointShare := pointTotal / (areaActivity + pointTotal)

	blocks := (opt.Emissions + simBlock - 1) / simBlock
	events := make([][]Event, blocks) // by block, in order
	workers := max(1, opt.Workers)
	if opt.Workers <= 0 {
		workers = 4
	}
	// The images are counts, whole numbers that add up exactly in any
	// order: each worker keeps its own.
	images := make([]*Simulation, workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	for w := range workers {
		out := &Simulation{Emitted: make([]float64, s.NZ*s.NY), Detected: make([]float64, s.NZ*s.NY), Naive: make([]float64, s.NZ*s.NY)}
		images[w] = out
		wg.Go(func() {
			for b := range next {
				n := min(simBlock, opt.Emissions-b*simBlock)
				r := rand.New(rand.NewPCG(opt.Seed, uint64(b)))
				out.Events = make([]Event, 0, n)
				for range n {
					var z, y float64
					if r.Float64() < pointShare {
						u := r.Float64() * pointTotal
						for _, p := range ph.Points {
							if z, y = p.Z, p.Y; u < p.Activity {
								break
							}
							u -= p.Activity
						}
					} else {
						for {
							z, y = z0+r.Float64()*(z1-z0), y0+r.Float64()*(y1-y0)
							if a, _ := ph.activity(z, y, rots); r.Float64()*peak < a {
								break
							}
						}
					}
					pix := s.pixelOf(z, y)
					if pix >= 0 {
						out.Emitted[pix]++
					} else {
						out.Outside++
					}
					p := Point{Z: z, Y: y, Tan: math.Tan((2*r.Float64() - 1) * maxAngle)}
					e := s.Project(p)
					if !s.Accepted(e) {
						continue
					}
					if pix >= 0 {
						out.Detected[pix]++
					}
					e.ZU += r.NormFloat64() * s.SigmaZ
					e.ZD += r.NormFloat64() * s.SigmaZ
					e.DL += r.NormFloat64() * s.SigmaDL
					out.Events = append(out.Events, e)
					q := s.Reconstruct(e)
					if pix := s.pixelOf(q.Z, q.Y); pix >= 0 {
						out.Naive[pix]++
					}
				}
				events[b] = out.Events
				if opt.Progress != nil {
					mu.Lock()
					done += n
					opt.Progress(done)
					mu.Unlock()
				}
			}
		})
	}
	for b := range blocks {
		if ctx.Err() != nil {
			break
		}
		next <- b
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sim := &Simulation{Emitted: make([]float64, s.NZ*s.NY), Detected: make([]float64, s.NZ*s.NY), Naive: make([]float64, s.NZ*s.NY)}
	total := 0
	for _, e := range events {
		total += len(e)
	}
	sim.Events = prefault.Make[Event](0, total)
	for _, e := range events {
		sim.Events = append(sim.Events, e...)
	}
	for _, im := range images {
		sim.Outside += im.Outside
		for i := range sim.Emitted {
			sim.Emitted[i] += im.Emitted[i]
			sim.Detected[i] += im.Detected[i]
			sim.Naive[i] += im.Naive[i]
		}
	}
	return sim, nil
}

// pixelOf returns the pixel containing (z, y), or -1 outside the image.
func (s Scanner) pixelOf(z, y float64) int {
	iz := math.Floor((z + float64(s.NZ)*s.Pixel/2) / s.Pixel)
	iy := math.Floor((float64(s.NY)*s.Pixel/2 - y) / s.Pixel)
	if iz < 0 || iy < 0 || iz >= float64(s.NZ) || iy >= float64(s.NY) {
		return -1
	}
	return int(iy)*s.NZ + int(iz)
}

// Validate reports options a simulation cannot run with: negative counts,
// or an angle range outside (0, pi/2] (0 stands for pi/4).
func (o SimOptions) Validate() error {
	switch {
	case o.Emissions < 0:
		return fmt.Errorf("jpet: %d emissions: must not be negative", o.Emissions)
	case o.Workers < 0:
		return fmt.Errorf("jpet: %d workers: must not be negative", o.Workers)
	case o.MaxAngle != 0 && !(o.MaxAngle > 0 && o.MaxAngle <= math.Pi/2):
		return fmt.Errorf("jpet: angle range %v rad must be in (0, pi/2]", o.MaxAngle)
	}
	return nil
}
