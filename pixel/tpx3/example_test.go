package tpx3_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

func ExampleNewReader() {
	t3pa := "Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n" +
		"0\t513\t100\t7\t3\t0\n" + // pixel (1, 2)
		"1\t514\t101\t12\t0\t0\n"
	r, err := tpx3.NewReader(strings.NewReader(t3pa), "run.t3pa", tpx3.Options{Width: 256, Height: 256})
	if err != nil {
		panic(err)
	}
	var hits pixel.Hits
	for {
		err := r.Read(&hits)
		for i := range hits.Len() {
			fmt.Printf("(%d, %d) at %v ns, ToT %d\n", hits.X[i], hits.Y[i], hits.ToA[i].Ns(), hits.ToT[i])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			panic(err)
		}
	}
	// Output:
	// (1, 2) at 2495.3125 ns, ToT 7
	// (2, 2) at 2525 ns, ToT 12
}
