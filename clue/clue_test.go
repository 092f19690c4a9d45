package clue

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomCase makes adversarial inputs: lattices with spacings equal to the
// cut-offs (exact distance ties, equal densities), duplicates, blobs,
// uniform noise, several layers, integer and real weights.
func randomCase(r *rand.Rand) (*Points, Params) {
	dim := 2 + r.IntN(2)
	n := r.IntN(300)
	if r.IntN(20) == 0 {
		n = r.IntN(3) // empty and tiny inputs
	}
	pts := &Points{Coords: make([][]float64, dim), Weight: make([]float64, n)}
	spacing := []float64{1, 0.5, 2, 0.3}[r.IntN(4)]
	mode := r.IntN(4)
	// Weights drawn per point from the first kinds: whole weights only in
	// half of the cases, so that whole weights on many points are common.
	weights := 2 + r.IntN(2)
	for d := range pts.Coords {
		pts.Coords[d] = make([]float64, n)
	}
	for i := range n {
		for d := range pts.Coords {
			var v float64
			switch mode {
			case 0: // lattice
				v = float64(r.IntN(8)) * spacing
			case 1: // blobs
				v = float64(r.IntN(3))*10 + r.NormFloat64()*1.5
			case 2: // uniform
				v = r.Float64() * 20
			default: // duplicates of a few points
				v = float64(r.IntN(3)) * spacing
			}
			pts.Coords[d][i] = v
		}
		switch r.IntN(weights) {
		case 0:
			pts.Weight[i] = 1
		case 1:
			pts.Weight[i] = float64(r.IntN(4))
		default:
			pts.Weight[i] = r.Float64() * 3
		}
	}
	if r.IntN(8) == 0 { // totals past 2^32: whole densities too large for ranks
		for i := range pts.Weight {
			pts.Weight[i] *= 1 << 31
		}
	}
	if r.IntN(2) == 0 {
		pts.Layer = make([]int32, n)
		for i := range pts.Layer {
			pts.Layer[i] = int32(r.IntN(3)) * 5
		}
	}
	p := Params{
		DC:     []float64{1, spacing, 2 * spacing, 1.7}[r.IntN(4)],
		RhoC:   []float64{0, 1, 2, 3, 5}[r.IntN(5)],
		DeltaC: []float64{1, spacing, 2 * spacing, 3}[r.IntN(4)],
		DeltaO: []float64{1, spacing, 2 * spacing, 4}[r.IntN(4)],
	}
	switch r.IntN(4) {
	case 0:
		p.Kernel = FlatKernel()
	case 1:
		p.Kernel = CMSKernel()
	case 2:
		p.Kernel = GaussianKernel(p.DC/2, 1+r.Float64())
	default:
		p.Kernel = ExponentialKernel(1/p.DC, 1)
	}
	if r.IntN(3) == 0 {
		p.TileSize = []float64{0.6, 0.7, 5, 100}[r.IntN(4)]
	}
	return pts, p
}

func equalResults(a, b *Result) error {
	for i := range a.Rho {
		if a.Rho[i] != b.Rho[i] {
			return fmt.Errorf("point %d: rho %v != %v", i, a.Rho[i], b.Rho[i])
		}
		if a.Delta[i] != b.Delta[i] || a.NH[i] != b.NH[i] {
			return fmt.Errorf("point %d: delta/nh %v/%d != %v/%d", i, a.Delta[i], a.NH[i], b.Delta[i], b.NH[i])
		}
		if a.IsSeed[i] != b.IsSeed[i] || a.ClusterID[i] != b.ClusterID[i] {
			return fmt.Errorf("point %d: seed/cluster %v/%d != %v/%d", i, a.IsSeed[i], a.ClusterID[i], b.IsSeed[i], b.ClusterID[i])
		}
	}
	if len(a.Rho) != len(b.Rho) || a.Clusters != b.Clusters || a.Outliers != b.Outliers {
		return fmt.Errorf("%d points, %d clusters, %d outliers != %d, %d, %d", len(a.Rho), a.Clusters, a.Outliers, len(b.Rho), b.Clusters, b.Outliers)
	}
	return nil
}

func TestMatchesReference(t *testing.T) {
	cases := 3000
	if testing.Short() {
		cases = 300
	}
	matchReference(t, cases)
}

// matchReference compares Run on one and three workers with the reference
// on the random cases of seeds [0, cases).
func matchReference(t *testing.T, cases int) {
	t.Helper()
	defer func(m int) { minParallel = m }(minParallel)
	minParallel = 8                                          // exercise the parallel paths on small inputs
	c1, c3 := &Clusterer{Workers: 1}, &Clusterer{Workers: 3} // reused across cases
	for seed := range cases {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		pts, p := randomCase(r)
		want := reference(pts, p)
		for _, c := range []*Clusterer{c1, c3} {
			got, err := c.Run(pts, p)
			if err != nil && p.TileSize != 0 && strings.Contains(err.Error(), "use a larger one") {
				continue // a grid too fine for its extent is refused, rightly
			}
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if err := equalResults(got, want); err != nil {
				t.Fatalf("seed %d (%d points, %dD, %+v, %d workers): %v", seed, pts.Len(), pts.Dim(), p, c.Workers, err)
			}
		}
	}
}

// TestWorkersIdentical: large inputs, every worker count, same bits.
func TestWorkersIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pts := &Points{Coords: [][]float64{make([]float64, 50000), make([]float64, 50000)}, Weight: make([]float64, 50000), Layer: make([]int32, 50000)}
	for i := range pts.Weight {
		pts.Coords[0][i] = float64(r.IntN(10))*12 + r.NormFloat64()*2
		pts.Coords[1][i] = float64(r.IntN(10))*12 + r.NormFloat64()*2
		pts.Weight[i] = r.Float64()
		pts.Layer[i] = int32(r.IntN(10))
	}
	for _, k := range []Kernel{FlatKernel(), GaussianKernel(1, 1)} {
		p := Params{DC: 2, RhoC: 3, DeltaC: 4, DeltaO: 5, Kernel: k}
		want, err := Run(pts, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want.Clusters < 500 || want.Outliers == 0 {
			t.Fatalf("uninteresting case: %d clusters, %d outliers", want.Clusters, want.Outliers)
		}
		for _, w := range []int{2, 3, 8} {
			got, err := Run(pts, p, w)
			if err != nil {
				t.Fatal(err)
			}
			if err := equalResults(got, want); err != nil {
				t.Fatalf("%v kernel, %d workers: %v", k.Kind, w, err)
			}
		}
	}
}

func TestThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		radius := math.Exp(r.NormFloat64() * 5)
		th := threshold(radius)
		if math.Sqrt(th) > radius || math.Sqrt(math.Nextafter(th, math.Inf(1))) <= radius {
			t.Fatalf("threshold(%v) = %v is not the largest square with sqrt <= r", radius, th)
		}
	}
}

func TestHandCase(t *testing.T) {
	// Three points on a line 1 apart, unit weights, dc = 1: densities
	// 2, 3, 2; the middle one is the seed; the others follow it.
	pts := &Points{Coords: [][]float64{{0, 1, 2, 10}, {0, 0, 0, 0}}, Weight: []float64{1, 1, 1, 1}}
	r, err := Run(pts, Params{DC: 1, RhoC: 2, DeltaC: 1.5, DeltaO: 1.5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Rho, []float64{2, 3, 2, 1}) || !slices.Equal(r.NH, []int32{1, -1, 1, -1}) ||
		!slices.Equal(r.ClusterID, []int32{0, 0, 0, -1}) || !slices.Equal(r.IsSeed, []bool{false, true, false, false}) ||
		r.Delta[0] != 1 || !math.IsInf(r.Delta[1], 1) || r.Clusters != 1 || r.Outliers != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestValidation(t *testing.T) {
	good := Params{DC: 1, RhoC: 1, DeltaC: 1, DeltaO: 1}
	for _, tc := range []struct {
		pts  *Points
		p    Params
		want string
	}{
		{&Points{Coords: [][]float64{{0, math.NaN()}}, Weight: []float64{1, 1}}, good, "point 1: coordinate 0 is NaN"},
		{&Points{Coords: [][]float64{{0, 1}}, Weight: []float64{1, -1}}, good, "point 1: weight -1"},
		{&Points{Coords: [][]float64{{0, 1, 2}, {0, 0, math.Inf(-1)}}, Weight: []float64{1, 1, 1}}, good, "point 2: coordinate 1 is -Inf"},
		{&Points{Coords: [][]float64{{0, 1, 2}}, Weight: []float64{1, math.Inf(1), math.NaN()}}, good, "point 1: weight +Inf"},
		{&Points{Coords: [][]float64{{0, 1, 2}}, Weight: []float64{1, 1, math.NaN()}}, good, "point 2: weight NaN"},
		{&Points{Coords: [][]float64{{0, 1}}, Weight: []float64{1}}, good, "coordinate 0 has 2 values for 1 points"},
		{&Points{Coords: [][]float64{{0}}, Weight: []float64{1}}, Params{DC: 0, DeltaC: 1, DeltaO: 1}, "dc = 0"},
		{&Points{Coords: [][]float64{{0}}, Weight: []float64{1}}, Params{DC: 1, DeltaC: 1, DeltaO: 1, Kernel: GaussianKernel(-1, 1)}, "gaussian kernel"},
	} {
		if _, err := Run(tc.pts, tc.p, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestFsum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		xs := make([]float64, r.IntN(60))
		for i := range xs {
			xs[i] = math.Ldexp(r.Float64(), r.IntN(120)-60)
		}
		if got, want := fsum(xs), exactSum(xs); got != want {
			t.Fatalf("fsum %v != %v for %v", got, want, xs)
		}
	}
}

// TestAllocationsPerRun: with the buffers reused, a run allocates a
// handful per parallel step (its goroutines and their closures), never per
// point. The expansion's rounds grow as the logarithm of the follower
// trees' depth: a few more steps on the larger input.
func TestAllocationsPerRun(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	make2D := func(n int) *Points {
		p := &Points{Coords: [][]float64{make([]float64, n), make([]float64, n)}, Weight: make([]float64, n)}
		for i := range n {
			p.Coords[0][i], p.Coords[1][i], p.Weight[i] = r.Float64()*100, r.Float64()*100, 1
		}
		return p
	}
	p := Params{DC: 2, RhoC: 3, DeltaC: 3, DeltaO: 3}
	for _, w := range []int{1, 2} {
		var counts []float64
		for _, n := range []int{10000, 100000} {
			pts := make2D(n)
			c := &Clusterer{Workers: w}
			c.Run(pts, p) // warm up
			counts = append(counts, testing.AllocsPerRun(5, func() { c.Run(pts, p) }))
		}
		if counts[1] > counts[0]+16 || counts[1] > 200 {
			t.Errorf("%d workers: %v allocations per run at 1e4 and 1e5 points", w, counts)
		}
	}
}

// TestHugeExtent: coordinates 2e19 apart (tile counts beyond int before
// the grid grows its tiles) cluster normally; an extent beyond float64's
// range is an error, not a panic.
func TestHugeExtent(t *testing.T) {
	p := Params{DC: 1, RhoC: 1, DeltaC: 1, DeltaO: 2}
	pts := &Points{Coords: [][]float64{{0, 0}, {0, 2e19}}, Weight: []float64{1, 1}}
	res, err := Run(pts, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Rho, []float64{1, 1}) || !slices.Equal(res.ClusterID, []int32{0, 1}) {
		t.Fatalf("rho %v, clusters %v; want [1 1], [0 1]", res.Rho, res.ClusterID)
	}
	pts = &Points{Coords: [][]float64{{-1e308, 1e308}, {0, 0}}, Weight: []float64{1, 1}}
	if _, err := Run(pts, p, 2); err == nil || !strings.Contains(err.Error(), "coordinate 0 spans") {
		t.Fatalf("error %v, want one about coordinate 0's span", err)
	}
}

// TestNearListCapacity: blobs whose points have about as many neighbours
// within the first nearest-higher radius as a near list holds (exactly
// full, one short, one over), among points just outside that radius that
// the density scan meets after them, so that a write past a full list
// would lose a neighbour. Compared with the reference.
func TestNearListCapacity(t *testing.T) {
	c := &Clusterer{Workers: 1}
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		k := nearCap - 3 + r.IntN(6)
		pts := &Points{Coords: [][]float64{nil, nil}}
		add := func(x, y, w float64) {
			pts.Coords[0] = append(pts.Coords[0], x)
			pts.Coords[1] = append(pts.Coords[1], y)
			pts.Weight = append(pts.Weight, w)
		}
		for b := range 4 {
			cx := float64(b) * 20
			for range k {
				add(cx+r.Float64()*0.4, r.Float64()*0.4, float64(1+r.IntN(3)))
			}
			for range 20 { // within dc, outside dc/2, after the blob in the tile
				add(cx+0.4+1.6+r.Float64()*0.9, r.Float64()*0.4, float64(1+r.IntN(3)))
			}
		}
		p := Params{DC: 3, RhoC: 2, DeltaC: 5, DeltaO: 5, TileSize: 5}
		got, err := c.Run(pts, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := equalResults(got, reference(pts, p)); err != nil {
			t.Fatalf("seed %d, %d points a blob: %v", seed, k, err)
		}
	}
}

// TestHugeRadius: searches far wider than the grid, with tiles much
// smaller than them, clamp to the grid rather than overflow its cells.
func TestHugeRadius(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{2, 3} {
		pts := &Points{Coords: make([][]float64, dim), Weight: make([]float64, 300)}
		for d := range pts.Coords {
			pts.Coords[d] = make([]float64, 300)
			for i := range pts.Coords[d] {
				pts.Coords[d][i] = r.Float64() * 10
			}
		}
		for i := range pts.Weight {
			pts.Weight[i] = 1
		}
		for _, p := range []Params{
			{DC: 1, RhoC: 2, DeltaC: 1e300, DeltaO: 3, TileSize: 0.5},
			{DC: 1e300, RhoC: 2, DeltaC: 1, DeltaO: 1e200, TileSize: 0.5},
		} {
			got, err := Run(pts, p, 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := equalResults(got, reference(pts, p)); err != nil {
				t.Fatalf("%dD, %+v: %v", dim, p, err)
			}
		}
	}
}

// TestSortByTile: the index's two-pass counting sort is the stable sort by
// tile, with the right tile starts and the columns in grid order, for
// grids of many bands and layers and any number of workers.
func TestSortByTile(t *testing.T) {
	defer func(m int) { minParallel = m }(minParallel)
	minParallel = 8
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct{ n, tiles int }{{0, 1}, {1, 1}, {50, 3}, {5000, 1 << bandBits}, {20000, 5<<bandBits + 17}, {3000, 9 << bandBits}} {
		for _, workers := range []int{1, 2, 3} {
			c := &Clusterer{Workers: workers}
			c.resize(tc.n, 2)
			c.grid.tiles = tc.tiles
			// Layers of a size unrelated to the bands, one layer, or one tile each.
			per := []int{max(1, tc.tiles/3+1), tc.tiles, 1}[workers-1]
			c.grid.perLayer = per
			pts := &Points{Coords: [][]float64{make([]float64, tc.n), make([]float64, tc.n)}, Weight: make([]float64, tc.n)}
			for i := range tc.n {
				pts.Coords[0][i], pts.Coords[1][i], pts.Weight[i] = float64(i), -float64(i), float64(2*i)
			}
			for w := range workers {
				c.scratch(w)
			}
			for i := range tc.n {
				c.key[i] = int32(r.IntN(tc.tiles))
				if i > 0 && r.IntN(4) == 0 {
					c.key[i] = c.key[i-1] // runs of one tile, as sorted input makes
				}
			}
			keys := slices.Clone(c.key[:tc.n]) // pos takes their storage
			c.sortByTile(pts)
			want := make([]int32, tc.n)
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortStableFunc(want, func(a, b int32) int { return int(keys[a]) - int(keys[b]) })
			if !slices.Equal(c.order[:tc.n], want) {
				t.Fatalf("n %d, %d tiles, %d workers: order differs from the stable sort", tc.n, tc.tiles, workers)
			}
			starts := make([]int32, tc.tiles+1) // by counting, the plain way
			for _, k := range keys {
				starts[k+1]++
			}
			for tile := range tc.tiles {
				starts[tile+1] += starts[tile]
			}
			for tile, at := range starts {
				if c.grid.start[tile] != at {
					t.Fatalf("n %d, %d tiles, %d workers: tile %d starts at %d, want %d", tc.n, tc.tiles, workers, tile, c.grid.start[tile], at)
				}
			}
			for k, i := range c.order[:tc.n] {
				f := float64(i)
				if c.pos[i] != int32(k) || c.layerTile[k] != keys[i]/int32(per)*int32(per) ||
					c.coords[0][k] != f || c.coords[1][k] != -f || c.weight[k] != 2*f {
					t.Fatalf("n %d, %d tiles, %d workers: grid point %d (input %d): pos %d, layer tile %d (per %d, tile %d), x %v, y %v, weight %v",
						tc.n, tc.tiles, workers, k, i, c.pos[i], c.layerTile[k], per, keys[i], c.coords[0][k], c.coords[1][k], c.weight[k])
				}
			}
		}
	}
}

// TestLongFollowerChain: a line of points of rising density makes one
// follower chain through all of them, the expansion's worst case (the
// deepest tree: log2(n) rounds of pointer jumping); the whole line is the
// last point's cluster.
func TestLongFollowerChain(t *testing.T) {
	defer func(m int) { minParallel = m }(minParallel)
	minParallel = 8
	const n = 3000
	pts := &Points{Coords: [][]float64{make([]float64, n), make([]float64, n)}, Weight: make([]float64, n)}
	for i := range n {
		pts.Coords[0][i] = float64(i) * 0.5
		pts.Weight[i] = float64(1 + i)
	}
	p := Params{DC: 0.1, RhoC: n, DeltaC: 1, DeltaO: 1} // only the last point is dense enough to seed
	want := reference(pts, p)
	for _, w := range []int{1, 2, 3} {
		got, err := Run(pts, p, w)
		if err != nil {
			t.Fatal(err)
		}
		if err := equalResults(got, want); err != nil {
			t.Fatalf("%d workers: %v", w, err)
		}
		if got.Clusters != 1 || got.ClusterID[0] != 0 || got.ClusterID[n-1] != 0 || !got.IsSeed[n-1] {
			t.Fatalf("%d workers: %d clusters, first point in %d, last in %d (seed %v)", w, got.Clusters, got.ClusterID[0], got.ClusterID[n-1], got.IsSeed[n-1])
		}
	}
}

// TestSparseLayerIDs: layer ids far apart (remapped through a sorted
// list) and negative ones (an offset) give the reference's results, the
// extremes of int32 included.
func TestSparseLayerIDs(t *testing.T) {
	defer func(m int) { minParallel = m }(minParallel)
	minParallel = 8 // several chunks: their extents are combined
	for _, ids := range [][]int32{{-2000000000, 0, 7, 2000000000}, {math.MinInt32, math.MaxInt32}, {-5, -3, -4}} {
		for seed := range 20 {
			r := rand.New(rand.NewPCG(uint64(seed), 17))
			n := 1 + r.IntN(300)
			pts := &Points{Coords: [][]float64{make([]float64, n), make([]float64, n)}, Weight: make([]float64, n), Layer: make([]int32, n)}
			for i := range n {
				pts.Coords[0][i], pts.Coords[1][i] = float64(r.IntN(10)), float64(r.IntN(10))
				pts.Weight[i] = float64(1 + r.IntN(2))
				pts.Layer[i] = ids[r.IntN(len(ids))]
			}
			p := Params{DC: 1.5, RhoC: 3, DeltaC: 2, DeltaO: 2}
			for _, workers := range []int{1, 3} {
				got, err := Run(pts, p, workers)
				if err != nil {
					t.Fatal(err)
				}
				if err := equalResults(got, reference(pts, p)); err != nil {
					t.Fatalf("layers %v, seed %d, %d workers: %v", ids, seed, workers, err)
				}
			}
		}
	}
}

// TestAtTheRadius: a nearest-higher exactly at the search radius (its
// squared distance equal to the limit, the largest that the radius
// admits) is found, with dm = dc so that no larger search follows.
func TestAtTheRadius(t *testing.T) {
	found := 0
	for _, r := range []float64{0.7, 1, 1.3, 2, 2.9, 3, 5, 7.1, 10} {
		limit := threshold(r)
		dx := math.Sqrt(limit)
		for range 4 {
			if dx*dx >= limit {
				break
			}
			dx = math.Nextafter(dx, math.Inf(1))
		}
		if dx*dx != limit {
			continue // no x with x*x equal to the limit
		}
		found++
		// A row of points with the pair at its middle, so that the pair
		// is inside a block; unit weights.
		pts := &Points{Coords: [][]float64{nil, nil}}
		for k := range 7 {
			x := float64(k-3) * 4 * r
			if k == 3 {
				pts.Coords[0] = append(pts.Coords[0], 0, dx)
				pts.Coords[1] = append(pts.Coords[1], 0, 0)
				continue
			}
			pts.Coords[0] = append(pts.Coords[0], x)
			pts.Coords[1] = append(pts.Coords[1], 0)
		}
		pts.Weight = make([]float64, len(pts.Coords[0]))
		for i := range pts.Weight {
			pts.Weight[i] = 1
		}
		p := Params{DC: r, RhoC: 1.5, DeltaC: r, DeltaO: r}
		got, err := Run(pts, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got.NH[3] != 4 || got.Delta[3] != dx {
			t.Fatalf("r %v: point 3 has nearest-higher %d at %v, want 4 at %v", r, got.NH[3], got.Delta[3], dx)
		}
		if err := equalResults(got, reference(pts, p)); err != nil {
			t.Fatalf("r %v: %v", r, err)
		}
	}
	if found < 3 {
		t.Fatalf("only %d radii with a distance at the limit", found)
	}
}

// TestWithoutNearLists: past maxNearPoints the first radius is searched
// in the tiles, with the reference's results.
func TestWithoutNearLists(t *testing.T) {
	defer func(m int) { maxNearPoints = m }(maxNearPoints)
	maxNearPoints = 0
	matchReference(t, 300)
}
