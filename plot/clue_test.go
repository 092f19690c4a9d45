package plot

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluesim"
)

func TestCLUEPlot(t *testing.T) {
	pts, err := cluesim.Generate(cluesim.Options{Layers: 2, PointsPerLayer: 2000, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := clue.Run(pts, clue.Params{DC: 3, RhoC: 8, DeltaC: 5, DeltaO: 5}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	layer := int32(1)
	if err := CLUE(&buf, pts, r, CLUEOptions{X: 0, Y: 1, Layer: &layer, Title: "layer 1"}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 16 cm at gonum/plot's 96 dpi.
	if b := img.Bounds(); b.Dx() != 605 || b.Dy() != 605 {
		t.Fatalf("image %v", b)
	}
	buf.Reset()
	if err := CLUE(&buf, pts, r, CLUEOptions{X: 0, Y: 1, Format: "svg"}); err != nil || !strings.HasPrefix(buf.String(), "<?xml") {
		t.Fatalf("svg: %v %q", err, buf.String()[:20])
	}
	if err := CLUE(&buf, pts, r, CLUEOptions{X: 0, Y: 2}); err == nil {
		t.Fatal("axis outside the coordinates accepted")
	}
}
