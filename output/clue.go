package output

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"go-hep.org/x/hep/groot"
	"go-hep.org/x/hep/groot/rtree"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/internal/textscan"
)

// WriteCLUE writes the points and CLUE's result, one row or entry per
// point: the coordinates, layer (when the input had one), weight, rho,
// delta (+Inf without a nearest-higher), nh, isSeed and clusterId. The
// format follows the extension: .csv, .parquet, .arrow (Arrow IPC) or
// .root (a TTree "clue"); "-" is CSV on stdout.
func WriteCLUE(name string, stdout io.Writer, t *cluecsv.Table, r *clue.Result) error {
	ext := strings.ToLower(filepath.Ext(name))
	if name == "-" {
		ext = ".csv"
	}
	switch ext {
	case ".csv", ".parquet", ".arrow":
		w, err := outfile.CreateWriter(name, stdout)
		if err != nil {
			return err
		}
		switch ext {
		case ".csv":
			err = cluecsv.Write(w, t, r)
		case ".arrow":
			err = writeCLUETable(newArrowTable, w, t, r)
		default:
			err = writeCLUETable(newParquetTable, w, t, r)
		}
		if err != nil {
			w.Abort()
			return err
		}
		return w.Close()
	case ".root":
		return writeCLUEROOT(name, t, r)
	}
	return fmt.Errorf("%s: %w %q (want .csv, .parquet, .arrow or .root)", name, ErrUnknownFormat, ext)
}

func clueFields(t *cluecsv.Table) []arrow.Field {
	var fs []arrow.Field
	for _, c := range t.Coords {
		fs = append(fs, field(c, arrow.PrimitiveTypes.Float64))
	}
	if t.Layer {
		fs = append(fs, field("layer", arrow.PrimitiveTypes.Int32))
	}
	return append(fs, field("weight", arrow.PrimitiveTypes.Float64), field("rho", arrow.PrimitiveTypes.Float64),
		field("delta", arrow.PrimitiveTypes.Float64), field("nh", arrow.PrimitiveTypes.Int32),
		field("isSeed", arrow.FixedWidthTypes.Boolean), field("clusterId", arrow.PrimitiveTypes.Int32))
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
		if t.Layer {
			f[k].(*array.Int32Builder).AppendValues(p.Layer[lo:hi], nil)
			k++
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

// clueEntry is one entry of the clue tree.
type clueEntry struct {
	coords             []float64
	layer              int32
	weight, rho, delta float64
	nh, clusterID      int32
	isSeed             bool
	hasLayer           bool
	coordNames         []string
}

func newCLUEEntry(coords []string, hasLayer bool) *clueEntry {
	return &clueEntry{coords: make([]float64, len(coords)), coordNames: coords, hasLayer: hasLayer}
}

func (e *clueEntry) vars() []rtree.WriteVar {
	var v []rtree.WriteVar
	for d, name := range e.coordNames {
		v = append(v, rtree.WriteVar{Name: name, Value: &e.coords[d]})
	}
	if e.hasLayer {
		v = append(v, rtree.WriteVar{Name: "layer", Value: &e.layer})
	}
	return append(v, rtree.WriteVar{Name: "weight", Value: &e.weight}, rtree.WriteVar{Name: "rho", Value: &e.rho},
		rtree.WriteVar{Name: "delta", Value: &e.delta}, rtree.WriteVar{Name: "nh", Value: &e.nh},
		rtree.WriteVar{Name: "isSeed", Value: &e.isSeed}, rtree.WriteVar{Name: "clusterId", Value: &e.clusterID})
}

func writeCLUEROOT(name string, t *cluecsv.Table, r *clue.Result) error {
	f, out, err := createROOT(name)
	if err != nil {
		return err
	}
	e := newCLUEEntry(t.Coords, t.Layer)
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

// ReadCLUE reads a file written by WriteCLUE.
func ReadCLUE(name string) (t *cluecsv.Table, r *clue.Result, err error) {
	defer recoverDamage(name, &err)
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".csv":
		return readCLUECSV(name)
	case ".parquet":
		tbl, err := readParquet(name, nil)
		if err != nil {
			return nil, nil, err
		}
		defer tbl.Release()
		return clueFromTable(name, tbl)
	case ".arrow":
		return nil, nil, arrowNotRead(name, tablesRead)
	case ".root":
		rep, err := readROOT("clue", name)
		if err != nil {
			return nil, nil, err
		}
		return rep.Table, rep.Result, nil
	default:
		return nil, nil, fmt.Errorf("%s: %w %q (want .csv, .parquet or .root)", name, ErrUnknownFormat, ext)
	}
}

// resultColumns are CLUE's output columns, after the input's.
var resultColumns = []string{"rho", "delta", "nh", "isSeed", "clusterId"}

func newResult(n int) *clue.Result {
	return &clue.Result{Rho: make([]float64, 0, n), Delta: make([]float64, 0, n), NH: make([]int32, 0, n),
		IsSeed: make([]bool, 0, n), ClusterID: make([]int32, 0, n)}
}

// finish counts seeds and outliers.
func finish(r *clue.Result) {
	for i, s := range r.IsSeed {
		if s {
			r.Clusters++
		}
		if r.ClusterID[i] < 0 {
			r.Outliers++
		}
	}
}

func readCLUECSV(name string) (*cluecsv.Table, *clue.Result, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	t, err := cluecsv.Read(f, name)
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	sc := textscan.New(f, name, "clue csv")
	r := newResult(t.Points.Len())
	var cols []int
	var fs [][]byte
	for line := range sc.Lines() {
		if textscan.Skip(line) {
			continue
		}
		fs = textscan.Fields(fs, line, ',')
		if cols == nil {
			for _, want := range resultColumns {
				i := slices.IndexFunc(fs, func(f []byte) bool { return string(f) == want })
				if i < 0 {
					return nil, nil, sc.Errorf("no column %q: not a CLUE result", want)
				}
				cols = append(cols, i)
			}
			continue
		}
		if len(fs) <= slices.Max(cols) {
			return nil, nil, sc.Errorf("%d fields", len(fs))
		}
		var v [5]float64
		for k, c := range cols {
			var ok bool
			if v[k], ok = textscan.ParseFloat(fs[c]); !ok {
				return nil, nil, sc.Errorf("%s %q is not a number", resultColumns[k], fs[c])
			}
		}
		r.Rho, r.Delta, r.NH = append(r.Rho, v[0]), append(r.Delta, v[1]), append(r.NH, int32(v[2]))
		r.IsSeed, r.ClusterID = append(r.IsSeed, v[3] != 0), append(r.ClusterID, int32(v[4]))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	finish(r)
	return t, r, nil
}

// clueFromTable converts a table with the columns [WriteCLUE] writes.
func clueFromTable(name string, tbl arrow.Table) (*cluecsv.Table, *clue.Result, error) {
	t := &cluecsv.Table{}
	for _, f := range tbl.Schema().Fields() {
		if f.Name == "weight" {
			break
		}
		if f.Name == "layer" {
			t.Layer = true
			continue
		}
		t.Coords = append(t.Coords, f.Name)
	}
	want := clueFields(t)
	if !slices.EqualFunc(tbl.Schema().Fields(), want, func(a, b arrow.Field) bool { return a.Name == b.Name && arrow.TypeEqual(a.Type, b.Type) }) {
		return nil, nil, fmt.Errorf("%s: columns %v are not a CLUE result", name, tbl.Schema())
	}
	p := &t.Points
	p.Coords = make([][]float64, len(t.Coords))
	r := newResult(int(tbl.NumRows()))
	f64 := func(col string, dst *[]float64) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Float64).Float64Values()...) })
	}
	i32 := func(col string, dst *[]int32) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Int32).Int32Values()...) })
	}
	for d, c := range t.Coords {
		f64(c, &p.Coords[d])
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
	finish(r)
	return t, r, nil
}

func readCLUEROOT(name string) (*cluecsv.Table, *clue.Result, error) {
	f, err := groot.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%w", err)
	}
	defer f.Close()
	obj, err := f.Get("clue")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	tree, ok := obj.(rtree.Tree)
	if !ok {
		return nil, nil, fmt.Errorf("%s: clue is a %s, not a TTree", name, obj.Class())
	}
	t := &cluecsv.Table{}
	for _, b := range tree.Branches() {
		if b.Name() == "weight" {
			break
		}
		if b.Name() == "layer" {
			t.Layer = true
			continue
		}
		t.Coords = append(t.Coords, b.Name())
	}
	e := newCLUEEntry(t.Coords, t.Layer)
	var rvars []rtree.ReadVar
	for _, v := range e.vars() {
		rvars = append(rvars, rtree.ReadVar{Name: v.Name, Value: v.Value})
	}
	rd, err := rtree.NewReader(tree, rvars)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	defer rd.Close()
	p := &t.Points
	p.Coords = make([][]float64, len(t.Coords))
	r := newResult(int(tree.Entries()))
	err = rd.Read(func(rtree.RCtx) error {
		for d := range p.Coords {
			p.Coords[d] = append(p.Coords[d], e.coords[d])
		}
		if t.Layer {
			p.Layer = append(p.Layer, e.layer)
		}
		p.Weight = append(p.Weight, e.weight)
		r.Rho, r.Delta, r.NH = append(r.Rho, e.rho), append(r.Delta, e.delta), append(r.NH, e.nh)
		r.IsSeed, r.ClusterID = append(r.IsSeed, e.isSeed), append(r.ClusterID, e.clusterID)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	finish(r)
	return t, r, nil
}
