package format

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/clue/cluesim"
	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/internal/fixture"
)

// TestCLUERoundTrip writes CLUE results (2D with layers and events, and
// 3D without either) in every format and reads back every value.
func TestCLUERoundTrip(t *testing.T) {
	pts, err := cluesim.Generate(cluesim.Options{Layers: 3, PointsPerLayer: 3000, Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	pts.Event = make([]int32, pts.Len())
	for i := range pts.Event {
		pts.Event[i] = int32(r.IntN(4)) - 1
	}
	layered := &cluecsv.Table{Coords: []string{"x", "y"}, Layer: true, Event: true, Points: *pts}
	var p3 clue.Points
	p3.Coords = make([][]float64, 3)
	for range 2000 {
		for d := range 3 {
			p3.Coords[d] = append(p3.Coords[d], r.NormFloat64()*5)
		}
		p3.Weight = append(p3.Weight, r.Float64())
	}
	flat := &cluecsv.Table{Coords: []string{"x0", "x1", "x2"}, Points: p3}
	for _, tab := range []*cluecsv.Table{layered, flat} {
		res, err := clue.Run(&tab.Points, clue.Params{DC: 3, RhoC: 2, DeltaC: 5, DeltaO: 5}, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".csv", ".parquet", ".arrow", ".root"} {
			name := filepath.Join(t.TempDir(), "clue"+ext)
			if err := WriteCLUE(name, nil, tab, res); err != nil {
				t.Fatal(err)
			}
			gt, gr, err := ReadCLUE(name)
			if err != nil {
				t.Fatal(err)
			}
			if ext == ".arrow" { // hitflow's reader gives what arrow-go's does
				at, ar, err := columnar.CLUEFromTable(name, fixture.ReadArrow(t, name))
				if err != nil || !reflect.DeepEqual(at, gt) || !reflect.DeepEqual(ar, gr) {
					t.Fatalf("arrow-go's reader gave other values (%v)", err)
				}
			}
			p, q := &gt.Points, &tab.Points
			ok := slices.Equal(gt.Coords, tab.Coords) && gt.Layer == tab.Layer && slices.Equal(p.Layer, q.Layer) &&
				gt.Event == tab.Event && slices.Equal(p.Event, q.Event) &&
				slices.Equal(p.Weight, q.Weight) && slices.Equal(gr.Rho, res.Rho) && slices.Equal(gr.Delta, res.Delta) &&
				slices.Equal(gr.NH, res.NH) && slices.Equal(gr.IsSeed, res.IsSeed) && slices.Equal(gr.ClusterID, res.ClusterID) &&
				gr.Clusters == res.Clusters && gr.Outliers == res.Outliers
			for d := range q.Coords {
				ok = ok && slices.Equal(p.Coords[d], q.Coords[d])
			}
			if !ok {
				t.Fatalf("%v %s: values differ after the round trip", tab.Coords, ext)
			}
			if kind, err := Kind(name); err != nil || kind != "clue" {
				t.Fatalf("%s: kind %q, %v", ext, kind, err)
			}
		}
	}
}
