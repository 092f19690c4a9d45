package plot

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

func TestScalingPlot(t *testing.T) {
	var buf bytes.Buffer
	series := []Series{{Dataset: "gamma", Mode: pixel.Sequential, Workers: []int{1}, Rate: []float64{12}},
		{Dataset: "gamma", Mode: pixel.LanesMode, Workers: []int{1, 2}, Rate: []float64{10, 19}},
		{Dataset: "pion45", Mode: pixel.Chunked, Workers: []int{1, 2}, Rate: []float64{8, 15}}}
	if err := Scaling(&buf, "scaling", series, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">gamma<", ">pion45<", ">sequential<", ">lanes<", ">chunked<", ">perfect scaling<", ">workers<", ">20<"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in the figure", want)
		}
	}
	if strings.Contains(buf.String(), ">20.00<") || strings.Count(buf.String(), ">gamma<") != 1 {
		t.Error("rates labelled with two decimals, or a dataset named twice")
	}
	// The paper's ten sets: no lines of perfect scaling, each set and mode
	// named once, and a figure tall enough for the legend.
	var many []Series
	for _, d := range []string{"gamma", "pion0", "pion45", "pion75", "pb0", "pb50", "pb90", "pblarge", "pblarge2", "pblarge3"} {
		many = append(many, Series{Dataset: d, Mode: pixel.Sequential, Workers: []int{1}, Rate: []float64{40}},
			Series{Dataset: d, Mode: pixel.LanesMode, Workers: []int{1, 2}, Rate: []float64{35, 70}},
			Series{Dataset: d, Mode: pixel.Chunked, Workers: []int{1, 2}, Rate: []float64{18, 33}})
	}
	buf.Reset()
	if err := Scaling(&buf, "scaling", many, "svg"); err != nil {
		t.Fatal(err)
	}
	if svg := buf.String(); strings.Contains(svg, "perfect scaling") || strings.Count(svg, ">pblarge3<") != 1 || strings.Count(svg, ">chunked<") != 1 {
		t.Errorf("ten sets: guides %v, %d pblarge3, %d chunked", strings.Contains(svg, "perfect scaling"), strings.Count(svg, ">pblarge3<"), strings.Count(svg, ">chunked<"))
	}
	buf.Reset()
	if err := Scaling(&buf, "scaling", series, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 16 x 12 cm at 96 dpi.
	if b := img.Bounds(); b.Dx() != 605 || b.Dy() != 454 {
		t.Fatalf("image %v", b)
	}
	if err := Scaling(&buf, "", []Series{{Dataset: "bad", Workers: []int{1}}}, "png"); err == nil {
		t.Fatal("series of unequal length accepted")
	}
}
