package output

import (
	"bytes"
	"image/png"
	"testing"
)

func TestScalingPlot(t *testing.T) {
	var buf bytes.Buffer
	series := []Series{{Label: "gamma lanes", Workers: []int{1, 2}, Rate: []float64{10, 19}}, {Label: "pion45 chunked", Workers: []int{1, 2}, Rate: []float64{8, 15}, Color: 1, Dashed: true}}
	if err := WriteScalingPlot(&buf, "scaling", series, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 16 x 12 cm at gonum/plot's 96 dpi.
	if b := img.Bounds(); b.Dx() != 605 || b.Dy() != 454 {
		t.Fatalf("image %v", b)
	}
	if err := WriteScalingPlot(&buf, "", []Series{{Label: "bad", Workers: []int{1}}}, "png"); err == nil {
		t.Fatal("series of unequal length accepted")
	}
}
