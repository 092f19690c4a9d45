package cluecl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluesim"
	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/internal/devicetest"
)

// clusterer opens the test device and builds the kernels.
func clusterer(t *testing.T) *Clusterer {
	t.Helper()
	c, err := New(devicetest.Open(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// same compares a device result with the CPU's, to the bit.
func same(got, want *clue.Result) error {
	if len(got.Rho) != len(want.Rho) || got.Clusters != want.Clusters || got.Outliers != want.Outliers {
		return fmt.Errorf("%d points, %d clusters, %d outliers; want %d, %d, %d", len(got.Rho), got.Clusters, got.Outliers, len(want.Rho), want.Clusters, want.Outliers)
	}
	for i := range want.Rho {
		if math.Float64bits(got.Rho[i]) != math.Float64bits(want.Rho[i]) || math.Float64bits(got.Delta[i]) != math.Float64bits(want.Delta[i]) ||
			got.NH[i] != want.NH[i] || got.IsSeed[i] != want.IsSeed[i] || got.ClusterID[i] != want.ClusterID[i] {
			return fmt.Errorf("point %d: rho %v delta %v nh %d seed %v cluster %d; want %v %v %d %v %d", i,
				got.Rho[i], got.Delta[i], got.NH[i], got.IsSeed[i], got.ClusterID[i],
				want.Rho[i], want.Delta[i], want.NH[i], want.IsSeed[i], want.ClusterID[i])
		}
	}
	return nil
}

// randomPoints makes inputs that stress the exact rules: points on a
// lattice whose spacing is a cut-off (distance ties, equal densities),
// repeated points, blobs and noise; layers with gaps between their ids,
// or ids far apart; several events; whole and fractional weights; 1 to 5
// coordinates.
func randomPoints(r *rand.Rand) (*clue.Points, clue.Params) {
	dim := []int{2, 2, 2, 3, 1, 5}[r.IntN(6)]
	n := r.IntN(500)
	if r.IntN(10) == 0 {
		n = r.IntN(3)
	}
	step := []float64{1, 0.5, 0.25, 1.5}[r.IntN(4)]
	pts := &clue.Points{Coords: make([][]float64, dim), Weight: make([]float64, n)}
	kind := r.IntN(4)
	for d := range pts.Coords {
		pts.Coords[d] = make([]float64, n)
		for i := range n {
			switch kind {
			case 0:
				pts.Coords[d][i] = float64(r.IntN(10)) * step
			case 1:
				pts.Coords[d][i] = float64(r.IntN(2))*8 + r.NormFloat64()
			case 2:
				pts.Coords[d][i] = r.Float64() * 15
			default:
				pts.Coords[d][i] = float64(r.IntN(2)) * step
			}
		}
	}
	fractional := r.IntN(2) == 0
	for i := range pts.Weight {
		pts.Weight[i] = float64(1 + r.IntN(3))
		if fractional && r.IntN(2) == 0 {
			pts.Weight[i] = r.Float64() * 2.5
		}
	}
	if r.IntN(4) == 0 {
		pts.Event = make([]int32, n)
		for i := range pts.Event {
			pts.Event[i] = int32(r.IntN(3))
		}
	}
	switch r.IntN(3) {
	case 1:
		pts.Layer = make([]int32, n)
		for i := range pts.Layer {
			pts.Layer[i] = int32(r.IntN(4)) * 3
		}
	case 2: // ids too far apart for an offset: remapped
		pts.Layer = make([]int32, n)
		for i := range pts.Layer {
			pts.Layer[i] = int32(r.IntN(3))*100000000 - 7
		}
	}
	p := clue.Params{
		DC:     []float64{step, 2 * step, 1.3, 0.7}[r.IntN(4)],
		RhoC:   []float64{0, 1, 3, 6}[r.IntN(4)],
		DeltaC: []float64{step, 2 * step, 2.5}[r.IntN(3)],
		DeltaO: []float64{step, 3 * step, 4}[r.IntN(3)],
	}
	if r.IntN(6) == 0 {
		p.TileSize = []float64{0.3, 50}[r.IntN(2)] // narrow tiles, or all in one
	}
	switch r.IntN(4) {
	case 1:
		p.Kernel = clue.CMSKernel()
	case 2:
		p.Kernel = clue.GaussianKernel(p.DC/2, 0.5+r.Float64())
	case 3:
		p.Kernel = clue.ExponentialKernel(1/p.DC, 1.5)
	}
	return pts, p
}

// TestMatchesCPU: on random and adversarial inputs, every kernel and
// dimension, the device gives the CPU's results to the bit, or the
// same refusal.
func TestMatchesCPU(t *testing.T) {
	c := clusterer(t)
	cpu := &clue.Clusterer{}
	cases := 400
	if testing.Short() {
		cases = 60
	}
	for seed := range cases {
		r := rand.New(rand.NewPCG(uint64(seed), 35))
		pts, p := randomPoints(r)
		want, werr := cpu.Run(pts, p)
		got, err := c.Run(pts, p)
		if werr != nil || err != nil {
			if werr == nil || err == nil || werr.Error() != err.Error() {
				t.Fatalf("seed %d: error %v, the CPU's %v", seed, err, werr)
			}
			continue
		}
		if err := same(got, want); err != nil {
			t.Fatalf("seed %d (%d points, %dD, layers %v, %+v): %v", seed, pts.Len(), pts.Dim(), len(pts.Layer) > 0, p, err)
		}
	}
}

// TestPaperCalorimeter: the paper's synthetic calorimeter, 100 layers of
// points in Gaussian clusters with noise, with its parameters.
func TestPaperCalorimeter(t *testing.T) {
	c := clusterer(t)
	pts, err := cluesim.Generate(cluesim.Options{PointsPerLayer: 1000, Seed: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := clue.Params{DC: 3, RhoC: 8, DeltaC: 5, DeltaO: 5, TileSize: 5}
	want, err := (&clue.Clusterer{}).Run(pts, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Run(pts, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := same(got, want); err != nil {
		t.Fatal(err)
	}
	if got.Clusters < 1000 || c.Timings.Density <= 0 || c.Timings.Upload <= 0 {
		t.Errorf("%d clusters, timings %+v", got.Clusters, c.Timings)
	}
}

// TestBatches: points of many events, more than a batch takes, go in
// batches of whole events (one event larger than a batch alone), each
// upload overlapping the kernels of the batch before, with the results
// of the CPU's one run.
func TestBatches(t *testing.T) {
	c := clusterer(t)
	cpu := &clue.Clusterer{}
	for seed := range 30 {
		r := rand.New(rand.NewPCG(uint64(seed), 36))
		pts, p := randomPoints(r)
		n := pts.Len()
		pts.Event = make([]int32, n)
		for i := range pts.Event {
			pts.Event[i] = int32(r.IntN(12)) * 1000
			if seed%2 == 1 { // each event's points together, as readers give them
				pts.Event[i] = int32(i*12/max(n, 1)) * 1000
			}
			if i < n/3 {
				pts.Event[i] = 7 // one event larger than a batch
			}
		}
		c.BatchPoints = 1 + n/8
		c.pinnedLimit = []int{DefaultPinned, 0}[seed%3/2] // staged, or from and into the Go heap
		want, werr := cpu.Run(pts, p)
		got, err := c.Run(pts, p)
		if werr != nil || err != nil {
			if werr == nil || err == nil {
				t.Fatalf("seed %d: error %v, the CPU's %v", seed, err, werr)
			}
			continue
		}
		if err := same(got, want); err != nil {
			t.Fatalf("seed %d (%d points in batches of %d): %v", seed, n, c.BatchPoints, err)
		}
	}
}

// TestEventSpans: events whose points are together are cut in place;
// interleaved ones are grouped first (in order of first appearance).
func TestEventSpans(t *testing.T) {
	for _, c := range []struct {
		events []int32
		max    int
		spans  [][2]int
		perm   []int
	}{
		{[]int32{5, 5, 5, 2, 2, 9}, 4, [][2]int{{0, 3}, {3, 6}}, nil},
		{[]int32{3, 3, 3, 3, 3, 4}, 2, [][2]int{{0, 5}, {5, 6}}, nil},
		{[]int32{1, 2, 1}, 10, [][2]int{{0, 3}}, []int{0, 2, 1}},
		{[]int32{1, 2, 2, 1, 3}, 2, [][2]int{{0, 2}, {2, 4}, {4, 5}}, []int{0, 3, 1, 2, 4}},
	} {
		spans, perm := eventSpans(c.events, c.max)
		if !slices.Equal(spans, c.spans) || !slices.Equal(perm, c.perm) {
			t.Errorf("%v in %d: spans %v perm %v, want %v %v", c.events, c.max, spans, perm, c.spans, c.perm)
		}
	}
}

// TestBatchesBadValue: a bad value in a later batch gives the CPU's
// error, which names the point by its index in the whole input.
func TestBatchesBadValue(t *testing.T) {
	c := clusterer(t)
	p := clue.Params{DC: 1, RhoC: 1, DeltaC: 2, DeltaO: 2}
	const n = 100
	pts := &clue.Points{Coords: [][]float64{make([]float64, n), make([]float64, n)}, Weight: make([]float64, n), Event: make([]int32, n)}
	for i := range n {
		pts.Coords[0][i], pts.Coords[1][i], pts.Weight[i], pts.Event[i] = float64(i%10), float64(i/10), 1, int32(i/10)
	}
	pts.Coords[1][77] = math.NaN()
	c.BatchPoints = 20
	_, werr := (&clue.Clusterer{}).Run(pts, p)
	_, err := c.Run(pts, p)
	if werr == nil || err == nil || err.Error() != werr.Error() {
		t.Fatalf("error %v, the CPU's %v", err, werr)
	}
}

// TestBatchesDeviceLost: a device lost at any command of a run in
// batches (an upload, a kernel, a read queued beside the next batch's
// kernels) fails the run with that error and leaves nothing queued; the
// next run gives the CPU's results.
func TestBatchesDeviceLost(t *testing.T) {
	c := clusterer(t)
	r := rand.New(rand.NewPCG(9, 37))
	pts := &clue.Points{Coords: [][]float64{nil, nil}}
	for e := range 5 {
		for range 60 {
			pts.Coords[0] = append(pts.Coords[0], float64(r.IntN(12)))
			pts.Coords[1] = append(pts.Coords[1], float64(r.IntN(12)))
			pts.Weight = append(pts.Weight, 1)
			pts.Event = append(pts.Event, int32(e))
		}
	}
	p := clue.Params{DC: 1.5, RhoC: 2, DeltaC: 2, DeltaO: 3}
	want, err := (&clue.Clusterer{}).Run(pts, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []int{70, 0} { // five batches, or one run
		c.BatchPoints = batch
		failed := 0
		for after := 0; ; after++ {
			c.ctx.InjectFailureAfter(after, opencl.ErrLost)
			_, err := c.Run(pts, p)
			if err == nil {
				c.ctx.InjectFailure(nil) // not reached: disarmed
				break                    // the run had fewer commands
			}
			if !errors.Is(err, opencl.ErrLost) {
				t.Fatalf("batches of %d, failing after %d commands: %v", batch, after, err)
			}
			failed++
			if _, _, _, _, events := opencl.Live(); events != 0 {
				t.Fatalf("batches of %d, failing after %d commands: %d events left", batch, after, events)
			}
			got, err := c.Run(pts, p)
			if err == nil {
				err = same(got, want)
			}
			if err != nil {
				t.Fatalf("batches of %d, the run after failing at %d: %v", batch, after, err)
			}
		}
		if failed < 30 {
			t.Fatalf("batches of %d: only %d runs failed: the commands were not all reached", batch, failed)
		}
	}
}
