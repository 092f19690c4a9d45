package clue

import (
	"math/rand/v2"
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
