package output

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

func TestScalingPlot(t *testing.T) {
	var buf bytes.Buffer
	series := []Series{{Label: "gamma sequential", Workers: []int{1}, Rate: []float64{12}},
		{Label: "gamma lanes", Workers: []int{1, 2}, Rate: []float64{10, 19}}, {Label: "pion45 chunked", Workers: []int{1, 2}, Rate: []float64{8, 15}, Color: 1, Dashed: true}}
	if err := WriteScalingPlot(&buf, "scaling", series, "svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">gamma sequential<", ">gamma lanes<", ">perfect scaling<", ">workers<", ">20<"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in the figure", want)
		}
	}
	if strings.Contains(buf.String(), ">20.00<") {
		t.Error("rates labelled with two decimals")
	}
	buf.Reset()
	if err := WriteScalingPlot(&buf, "scaling", series, "png"); err != nil {
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
	if err := WriteScalingPlot(&buf, "", []Series{{Label: "bad", Workers: []int{1}}}, "png"); err == nil {
		t.Fatal("series of unequal length accepted")
	}
}
