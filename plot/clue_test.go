package plot

import (
	"bytes"
	"fmt"
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
	// The title counts the clusters and outliers of the layer drawn.
	seeds, outliers := 0, 0
	for i, l := range pts.Layer {
		if l == layer && r.IsSeed[i] {
			seeds++
		}
		if l == layer && r.ClusterID[i] < 0 {
			outliers++
		}
	}
	buf.Reset()
	if err := CLUE(&buf, pts, r, CLUEOptions{X: 0, Y: 1, Layer: &layer, Title: "in.csv, layer 1", Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("in.csv, layer 1: %d clusters, %d outliers", seeds, outliers); seeds == r.Clusters || !strings.Contains(buf.String(), want) {
		t.Fatalf("the title is not %q (%d clusters in all)", want, r.Clusters)
	}
	if err := CLUE(&buf, pts, r, CLUEOptions{X: 0, Y: 2}); err == nil {
		t.Fatal("axis outside the coordinates accepted")
	}
}
