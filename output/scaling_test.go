package output

import (
	"bytes"
	"image/png"
	"testing"
)

func TestScalingPlot(t *testing.T) {
	var buf bytes.Buffer
	series := []Series{{"gamma lanes", []int{1, 2}, []float64{10, 19}}, {"pion45 chunked", []int{1, 2}, []float64{8, 15}}}
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
	if err := WriteScalingPlot(&buf, "", []Series{{"bad", []int{1}, nil}}, "png"); err == nil {
		t.Fatal("series of unequal length accepted")
	}
}
