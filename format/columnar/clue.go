package columnar

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
)

func clueFields(t *cluecsv.Table) []arrow.Field {
	var fs []arrow.Field
	for _, c := range t.Coords {
		fs = append(fs, field(c, arrow.PrimitiveTypes.Float64))
	}
	if t.Event {
		fs = append(fs, field("event", arrow.PrimitiveTypes.Int32))
	}
	if t.Layer {
		fs = append(fs, field("layer", arrow.PrimitiveTypes.Int32))
	}
	return append(fs, field("weight", arrow.PrimitiveTypes.Float64), field("rho", arrow.PrimitiveTypes.Float64),
		field("delta", arrow.PrimitiveTypes.Float64), field("nh", arrow.PrimitiveTypes.Int32),
		field("isSeed", arrow.FixedWidthTypes.Boolean), field("clusterId", arrow.PrimitiveTypes.Int32))
}

// WriteCLUEParquet writes the points and CLUE's result as Parquet: the
// coordinates, event and layer (when the input had them), weight, rho,
// delta, nh, isSeed and clusterId.
func WriteCLUEParquet(w io.Writer, t *cluecsv.Table, r *clue.Result) error {
	return writeCLUETable(newParquetTable, w, t, r)
}

// WriteCLUEArrow writes the columns of [WriteCLUEParquet] as an Arrow IPC
// file.
func WriteCLUEArrow(w io.Writer, t *cluecsv.Table, r *clue.Result) error {
	return writeCLUETable(newArrowTable, w, t, r)
}

// writeCLUETable writes the result as a table that newTable starts:
// Parquet or Arrow.
func writeCLUETable(newTable func(io.Writer, []arrow.Field) (*table, error), w io.Writer, t *cluecsv.Table, r *clue.Result) error {
	tab, err := newTable(w, clueFields(t))
	if err != nil {
		return err
	}
	p := &t.Points
	for lo := 0; lo < p.Len(); lo += rowGroup {
		hi := min(p.Len(), lo+rowGroup)
		f := tab.rb.Fields()
		k := 0
		for d := range p.Coords {
			f[k].(*array.Float64Builder).AppendValues(p.Coords[d][lo:hi], nil)
			k++
		}
		for _, col := range [...]struct {
			has bool
			v   []int32
		}{{t.Event, p.Event}, {t.Layer, p.Layer}} {
			if col.has {
				f[k].(*array.Int32Builder).AppendValues(col.v[lo:hi], nil)
				k++
			}
		}
		f[k].(*array.Float64Builder).AppendValues(p.Weight[lo:hi], nil)
		f[k+1].(*array.Float64Builder).AppendValues(r.Rho[lo:hi], nil)
		f[k+2].(*array.Float64Builder).AppendValues(r.Delta[lo:hi], nil)
		f[k+3].(*array.Int32Builder).AppendValues(r.NH[lo:hi], nil)
		f[k+4].(*array.BooleanBuilder).AppendValues(r.IsSeed[lo:hi], nil)
		f[k+5].(*array.Int32Builder).AppendValues(r.ClusterID[lo:hi], nil)
		if err := tab.added(hi - lo); err != nil {
			tab.Close()
			return err
		}
	}
	return tab.Close()
}

// CLUEFromTable converts a table with the columns [WriteCLUEParquet]
// writes, checked first; name is for messages.
func CLUEFromTable(name string, tbl arrow.Table) (*cluecsv.Table, *clue.Result, error) {
	t := &cluecsv.Table{}
	for _, f := range tbl.Schema().Fields() {
		if f.Name == "weight" {
			break
		}
		if f.Name == "layer" || f.Name == "event" {
			t.Layer, t.Event = t.Layer || f.Name == "layer", t.Event || f.Name == "event"
			continue
		}
		t.Coords = append(t.Coords, f.Name)
	}
	want := clueFields(t)
	if !slices.EqualFunc(tbl.Schema().Fields(), want, func(a, b arrow.Field) bool { return a.Name == b.Name && arrow.TypeEqual(a.Type, b.Type) }) {
		var names []string
		for _, f := range tbl.Schema().Fields() {
			names = append(names, f.Name)
		}
		return nil, nil, fmt.Errorf("%s: columns %s are not a CLUE result", name, strings.Join(names, ","))
	}
	p := &t.Points
	p.Coords = make([][]float64, len(t.Coords))
	r := &clue.Result{}
	r.Reserve(int(tbl.NumRows()))
	f64 := func(col string, dst *[]float64) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Float64).Float64Values()...) })
	}
	i32 := func(col string, dst *[]int32) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Int32).Int32Values()...) })
	}
	for d, c := range t.Coords {
		f64(c, &p.Coords[d])
	}
	if t.Event {
		i32("event", &p.Event)
	}
	if t.Layer {
		i32("layer", &p.Layer)
	}
	f64("weight", &p.Weight)
	f64("rho", &r.Rho)
	f64("delta", &r.Delta)
	i32("nh", &r.NH)
	eachChunk(tbl, "isSeed", func(a arrow.Array) {
		b := a.(*array.Boolean)
		for i := range b.Len() {
			r.IsSeed = append(r.IsSeed, b.Value(i))
		}
	})
	i32("clusterId", &r.ClusterID)
	r.Count()
	return t, r, nil
}
