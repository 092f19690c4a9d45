package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// Cluster a Timepix3 file into a Parquet file of clusters, then read it
// back. The file here is three hits written for the example: two
// neighbours 25 ns apart make one cluster, the third hit another.
func ExampleRun() {
	dir, _ := os.MkdirTemp("", "hitflow")
	defer os.RemoveAll(dir)
	raw := filepath.Join(dir, "run.tpx3")
	if err := writeThreeHits(raw); err != nil {
		fmt.Println(err)
		return
	}

	in, err := os.Open(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()
	out := filepath.Join(dir, "clusters.parquet")
	clusters, err := format.CreateClusters(out, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	layout, _ := tpx3.LayoutByName("single")
	sum, err := pipeline.Run(context.Background(), pipeline.Job{
		Sources:  []pipeline.Source{{Name: raw, R: in}},
		Reader:   tpx3.Options{Layout: layout},
		Cluster:  pixel.DefaultConfig(),
		Clusters: clusters,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := clusters.Close(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("hits:", sum.Hits, "clusters:", sum.Clusters)

	back, err := format.ReadClusters(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range back.Len() {
		fmt.Printf("cluster %d: %d hits from %v ns, centroid (%.2f, %.2f)\n",
			back.ID[i], back.Size[i], back.FirstToA[i].Ns(), back.X[i], back.Y[i])
	}
	// Output:
	// hits: 3 clusters: 2
	// cluster 0: 2 hits from 100 ns, centroid (10.25, 20.00)
	// cluster 1: 1 hits from 500 ns, centroid (100.00, 100.00)
}

// writeThreeHits writes a .tpx3 file of three hits on chip 0.
func writeThreeHits(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w, err := tpx3.NewHitWriter(f, tpx3.TPX3)
	if err != nil {
		return err
	}
	var h pixel.Hits
	h.Append(10, 20, 100*pixel.Nanosecond, 30)
	h.Append(11, 20, 125*pixel.Nanosecond, 10)
	h.Append(100, 100, 500*pixel.Nanosecond, 5)
	if err := w.Write(&h); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}
