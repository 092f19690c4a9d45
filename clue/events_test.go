package clue

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEventsAreIndependent: points of several events clustered in one run
// give each event's points clustered alone: the same densities,
// nearest-higher points (as indices of the whole), seeds and cluster
// ids numbered within the event; event ids close together or far apart.
func TestEventsAreIndependent(t *testing.T) {
	c := &Clusterer{}
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 5))
		pts, p := randomCase(r)
		n := pts.Len()
		ids := []int32{0, 1, 2, 7}
		if r.IntN(2) == 0 {
			ids = []int32{-2000000000, 5, 2000000000}
		}
		pts.Event = make([]int32, n)
		for i := range pts.Event {
			pts.Event[i] = ids[r.IntN(len(ids))]
		}
		got, err := c.Run(pts, p)
		if err != nil && p.TileSize != 0 && strings.Contains(err.Error(), "use a larger one") {
			continue // each event's layers take tiles of their own
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got = clone(got)
		clusters, outliers := 0, 0
		for _, ev := range ids {
			var idx []int
			one := &Points{Coords: make([][]float64, pts.Dim())}
			for i := range n {
				if pts.Event[i] != ev {
					continue
				}
				idx = append(idx, i)
				for d := range one.Coords {
					one.Coords[d] = append(one.Coords[d], pts.Coords[d][i])
				}
				one.Weight = append(one.Weight, pts.Weight[i])
				if len(pts.Layer) > 0 {
					one.Layer = append(one.Layer, pts.Layer[i])
				}
			}
			want, err := (&Clusterer{}).Run(one, p)
			if err != nil {
				t.Fatal(err)
			}
			clusters, outliers = clusters+want.Clusters, outliers+want.Outliers
			for k, i := range idx {
				nh := int32(-1)
				if want.NH[k] >= 0 {
					nh = int32(idx[want.NH[k]])
				}
				if got.Rho[i] != want.Rho[k] || got.Delta[i] != want.Delta[k] || got.NH[i] != nh ||
					got.IsSeed[i] != want.IsSeed[k] || got.ClusterID[i] != want.ClusterID[k] {
					t.Fatalf("seed %d: event %d point %d: %v %v %d %v %d, alone %v %v %d %v %d", seed, ev, i,
						got.Rho[i], got.Delta[i], got.NH[i], got.IsSeed[i], got.ClusterID[i],
						want.Rho[k], want.Delta[k], nh, want.IsSeed[k], want.ClusterID[k])
				}
			}
		}
		if got.Clusters != clusters || got.Outliers != outliers {
			t.Fatalf("seed %d: %d clusters, %d outliers; the events alone %d, %d", seed, got.Clusters, got.Outliers, clusters, outliers)
		}
	}
}

func clone(r *Result) *Result {
	return &Result{Rho: append([]float64(nil), r.Rho...), Delta: append([]float64(nil), r.Delta...), NH: append([]int32(nil), r.NH...),
		IsSeed: append([]bool(nil), r.IsSeed...), ClusterID: append([]int32(nil), r.ClusterID...), Clusters: r.Clusters, Outliers: r.Outliers}
}

// TestEventsInParts: on inputs long enough to run in parts, the view's
// layers and the numbering are those of one goroutine and of a plain
// reference: a layer per (event, layer) pair in the combined numbering,
// and each event's seeds numbered from 0 in input order; the same when
// the view's layers go into a slice given (ViewInto) and when the
// numbers are applied by the caller (Numbers).
func TestEventsInParts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	n := 6*minPart + 123
	pts := &Points{Coords: [][]float64{make([]float64, n)}, Weight: make([]float64, n), Event: make([]int32, n), Layer: make([]int32, n)}
	for i := range n {
		pts.Event[i], pts.Layer[i] = int32(r.IntN(40))-7, int32(r.IntN(100))+3
	}
	// a result: seeds numbered in input order, followers of an earlier
	// seed of their event, outliers -1
	res := &Result{IsSeed: make([]bool, n), ClusterID: make([]int32, n)}
	last := map[int32]int32{}
	for i := range n {
		ev := pts.Event[i]
		id, ok := last[ev]
		switch {
		case r.IntN(10) == 0:
			res.IsSeed[i], id = true, int32(res.Clusters)
			last[ev] = id
			res.Clusters++
		case !ok || r.IntN(5) == 0:
			id = -1
		}
		res.ClusterID[i] = id
	}
	want := make([]int32, n)
	count, local := map[int32]int32{}, map[int32]int32{}
	for i := range n {
		if res.IsSeed[i] {
			local[res.ClusterID[i]] = count[pts.Event[i]]
			count[pts.Event[i]]++
		}
	}
	for i, id := range res.ClusterID {
		want[i] = -1
		if id >= 0 {
			want[i] = local[id]
		}
	}
	for _, workers := range []int{1, 4} {
		e := &Events{Workers: workers}
		view, err := e.View(pts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if l := (pts.Event[i]+7)*100 + pts.Layer[i] - 3; view.Layer[i] != l {
				t.Fatalf("%d workers: point %d of event %d layer %d in layer %d, want %d", workers, i, pts.Event[i], pts.Layer[i], view.Layer[i], l)
			}
		}
		into := make([]int32, n)
		staged, err := e.ViewInto(pts, into)
		if err != nil || &staged.Layer[0] != &into[0] || !slices.Equal(into, view.Layer) {
			t.Fatalf("%d workers: ViewInto's layers are not View's in the slice given (%v)", workers, err)
		}
		got := &Result{IsSeed: res.IsSeed, ClusterID: slices.Clone(res.ClusterID), Clusters: res.Clusters}
		first := slices.Clone(e.Numbers(pts, got))
		e.Number(pts, got)
		if !slices.Equal(got.ClusterID, want) {
			t.Fatalf("%d workers: the ids differ from the reference", workers)
		}
		for i, id := range res.ClusterID {
			if id >= 0 && first[id] != want[i] {
				t.Fatalf("%d workers: Numbers gives cluster %d number %d, want %d", workers, id, first[id], want[i])
			}
		}
	}
}

// TestNewPlanCopying: the plan of NewPlan, and the weights and
// coordinates copied, on random inputs read in one chunk and in several;
// with a bad value, NewPlan's error.
func TestNewPlanCopying(t *testing.T) {
	defer func(m int) { minParallel = m }(minParallel)
	r := rand.New(rand.NewPCG(5, 11))
	for seed := range 40 {
		minParallel = []int{4096, 8}[seed%2] // one chunk, or several
		pts, p := randomCase(r)
		if seed%5 == 1 && pts.Len() > 0 {
			pts.Coords[r.IntN(pts.Dim())][r.IntN(pts.Len())] = math.Inf(1)
		}
		n := pts.Len()
		to := &Points{Coords: make([][]float64, pts.Dim()), Weight: make([]float64, n)}
		for d := range to.Coords {
			to.Coords[d] = make([]float64, n)
		}
		want, werr := NewPlan(pts, p)
		got, err := NewPlanCopying(pts, p, to)
		if werr != nil || err != nil {
			if werr == nil || err == nil || err.Error() != werr.Error() {
				t.Fatalf("seed %d: error %v, NewPlan's %v", seed, err, werr)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: plan %+v, NewPlan's %+v", seed, got, want)
		}
		if !slices.Equal(to.Weight, pts.Weight) {
			t.Fatalf("seed %d: the weights copied differ", seed)
		}
		for d := range to.Coords {
			if !slices.Equal(to.Coords[d], pts.Coords[d]) {
				t.Fatalf("seed %d: coordinate %d copied differs", seed, d)
			}
		}
	}
}
