package root

import (
	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"go-hep.org/x/hep/groot/rtree"
)

// clueEntry is one entry of the clue tree.
type clueEntry struct {
	coords             []float64
	event, layer       int32
	weight, rho, delta float64
	nh, clusterID      int32
	isSeed             bool
	hasEvent, hasLayer bool
	coordNames         []string
}

func newCLUEEntry(t *cluecsv.Table) *clueEntry {
	return &clueEntry{coords: make([]float64, len(t.Coords)), coordNames: t.Coords, hasEvent: t.Event, hasLayer: t.Layer}
}

func (e *clueEntry) vars() []rtree.WriteVar {
	var v []rtree.WriteVar
	for d, name := range e.coordNames {
		v = append(v, rtree.WriteVar{Name: name, Value: &e.coords[d]})
	}
	if e.hasEvent {
		v = append(v, rtree.WriteVar{Name: "event", Value: &e.event})
	}
	if e.hasLayer {
		v = append(v, rtree.WriteVar{Name: "layer", Value: &e.layer})
	}
	return append(v, rtree.WriteVar{Name: "weight", Value: &e.weight}, rtree.WriteVar{Name: "rho", Value: &e.rho},
		rtree.WriteVar{Name: "delta", Value: &e.delta}, rtree.WriteVar{Name: "nh", Value: &e.nh},
		rtree.WriteVar{Name: "isSeed", Value: &e.isSeed}, rtree.WriteVar{Name: "clusterId", Value: &e.clusterID})
}

// WriteCLUE writes the points and CLUE's result as a TTree "clue", one
// entry per point: the coordinates, event and layer (when the input had
// them), weight, rho, delta, nh, isSeed and clusterId.
func WriteCLUE(name string, t *cluecsv.Table, r *clue.Result) error {
	f, out, err := createROOT(name)
	if err != nil {
		return err
	}
	e := newCLUEEntry(t)
	tw, err := rtree.NewWriter(f, "clue", e.vars(), rtree.WithZstd(1), rtree.WithTitle("hitflow CLUE result"))
	if err == nil {
		err = completeStreamers(f)
	}
	if err != nil {
		return closeROOT(f, out, err)
	}
	p := &t.Points
	for i := range p.Len() {
		for d := range p.Coords {
			e.coords[d] = p.Coords[d][i]
		}
		if t.Event {
			e.event = p.Event[i]
		}
		if t.Layer {
			e.layer = p.Layer[i]
		}
		e.weight, e.rho, e.delta, e.nh = p.Weight[i], r.Rho[i], r.Delta[i], r.NH[i]
		e.isSeed, e.clusterID = r.IsSeed[i], r.ClusterID[i]
		if _, err = tw.Write(); err != nil {
			break
		}
	}
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	return closeROOT(f, out, err)
}
