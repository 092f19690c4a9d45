package pixel_test

import (
	"fmt"

	"github.com/hitflow/hitflow/pixel"
)

func ExampleClusterer() {
	c, err := pixel.NewClusterer(pixel.DefaultConfig()) // local, dt = 200 ns, 256 x 256
	if err != nil {
		panic(err)
	}
	var hits pixel.Hits
	hits.Append(10, 10, 0, 20)                   // a two-pixel cluster...
	hits.Append(11, 11, 150*pixel.Nanosecond, 5) // ...diagonal neighbours 150 ns apart
	hits.Append(12, 12, 400*pixel.Nanosecond, 9) // 250 ns after its neighbour: a new cluster
	print := func(cl *pixel.Clusters) {
		for i := range cl.Len() {
			fmt.Printf("cluster %d: %d hits from %v ns, ToT %d, centroid (%.1f, %.1f)\n",
				cl.ID[i], cl.Size[i], cl.FirstToA[i].Ns(), cl.ToTSum[i], cl.X[i], cl.Y[i])
		}
	}
	// Add returns the clusters already finished (here the first one, since
	// time has moved on by more than dt); Flush returns the rest.
	print(c.Add(&hits))
	print(c.Flush())
	// Output:
	// cluster 0: 2 hits from 0 ns, ToT 25, centroid (10.2, 10.2)
	// cluster 1: 1 hits from 400 ns, ToT 9, centroid (12.0, 12.0)
}
