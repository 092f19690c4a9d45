package pixelsim_test

import (
	"fmt"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

func ExampleGenerate() {
	d, _ := pixelsim.DatasetByName("pion75")
	n := 0
	err := pixelsim.Generate(pixelsim.Options{Dataset: d, Hits: 10000, Seed: 1, RateMHz: 40}, func(h *pixel.Hits) error {
		n += h.Len()
		return nil
	})
	fmt.Println(n, err)
	// Output: 10000 <nil>
}
