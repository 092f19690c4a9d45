package jpet_test

import (
	"context"
	"fmt"

	"github.com/hitflow/hitflow/jpet"
)

// Simulate a point source in the paper's scanner, reconstruct it with ten
// MLEM iterations and find it again in the image.
func ExampleReconstructor() {
	s := jpet.PaperScanner().WithDefaults()
	src := jpet.Phantom{Points: []jpet.PointSource{{Z: 0.05, Y: -0.1, Activity: 1}}}
	sim, err := jpet.Simulate(context.Background(), s, src, jpet.SimOptions{Emissions: 20000, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, err := jpet.NewReconstructor(s, sim.Events, jpet.Options{Kernel: jpet.Analytic, Sensitivity: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 10 {
		rec.Iterate()
	}
	img := rec.Image()
	brightest := 0
	for i, v := range img {
		if v > img[brightest] {
			brightest = i
		}
	}
	z, y := s.PixelCentre(brightest%s.NZ, brightest/s.NZ)
	fmt.Printf("%d events; brightest pixel at z = %.2f m, y = %.2f m\n", len(sim.Events), z, y)
	// Output:
	// 14563 events; brightest pixel at z = 0.05 m, y = -0.10 m
}
