package clue_test

import (
	"fmt"

	"github.com/hitflow/hitflow/clue"
)

// Two dense groups of points on one layer and a stray point: CLUE finds
// two clusters, each around a seed, and marks the stray point an outlier.
func ExampleRun() {
	pts := &clue.Points{Coords: [][]float64{
		{0, 1, 0, 1, 0.5, 10, 11, 10, 11, 10.5, 30},
		{0, 0, 1, 1, 0.5, 10, 10, 11, 11, 10.5, 30},
	}}
	for range pts.Coords[0] {
		pts.Weight = append(pts.Weight, 1)
	}
	params := clue.Params{DC: 1.5, RhoC: 2, DeltaC: 3, DeltaO: 3}
	res, err := clue.Run(pts, params, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("clusters:", res.Clusters, "outliers:", res.Outliers)
	fmt.Println("cluster of each point:", res.ClusterID)
	// Output:
	// clusters: 2 outliers: 1
	// cluster of each point: [0 0 0 0 0 1 1 1 1 1 -1]
}
