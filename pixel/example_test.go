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

func ExampleSorter() {
	// Hits read out up to 1 us late, put back in time order; a hit is
	// held until one at least a window later has come.
	s, err := pixel.NewSorter(pixel.Microsecond, 0)
	if err != nil {
		panic(err)
	}
	var readout, sorted pixel.Hits
	for _, ns := range []float64{100, 40, 900, 1500, 1200, 3000} {
		readout.Append(1, 1, pixel.TimeFromNs(ns), 10)
	}
	s.PushTo(&sorted, &readout) // appends the hits released so far
	fmt.Println("released:", sorted.Len(), "(up to 3000 - 1000 ns)")
	s.FlushTo(&sorted) // the end of the stream: the rest
	for _, t := range sorted.ToA {
		fmt.Println(t.Ns())
	}
	// Output:
	// released: 5 (up to 3000 - 1000 ns)
	// 40
	// 100
	// 900
	// 1200
	// 1500
	// 3000
}
