// Package cluecsv reads points for CLUE from CSV and writes CLUE's results
// next to them.
//
// Input: a header naming the coordinate columns (x, y, z or x0, x1, ...),
// an optional integer "layer" column and the "weight" column, e.g.
//
//	x0,x1,weight
//	8.87,41.05,1.0
//
// Result columns written by [Write] (rho, delta, nh, isSeed, clusterId)
// are ignored, so an output file reads back as input. A file without a
// header must have four columns, x,y,layer,weight (the original CLUE
// format).
package cluecsv

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/internal/textfmt"
	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/internal/textscan"
)

// Table is a point set with the names of its columns.
type Table struct {
	Coords []string // coordinate column names, in order
	Layer  bool     // the file had a layer column
	Points clue.Points
}

var coordName = regexp.MustCompile(`^(x|y|z|x[0-9]+)$`)

var resultColumns = map[string]bool{"rho": true, "delta": true, "nh": true, "isseed": true, "clusterid": true}

// Read parses a CSV point file; errors name the file and the line.
func Read(r io.Reader, name string) (*Table, error) {
	sc := textscan.New(r, name, "clue csv")
	t := &Table{}
	var coordCol []int
	layerCol, weightCol := -1, -1
	ncol := 0
	var fields [][]byte
	for line := range sc.Lines() {
		if textscan.Skip(line) {
			continue
		}
		fields = textscan.Fields(fields, line, ',')
		if ncol == 0 { // the first line: a header, or four bare columns
			ncol = len(fields)
			if _, ok := textscan.ParseFloat(fields[0]); !ok {
				for i, f := range fields {
					switch lf := strings.ToLower(string(f)); {
					case lf == "layer":
						layerCol = i
					case lf == "weight":
						weightCol = i
					case coordName.MatchString(lf):
						coordCol = append(coordCol, i)
						t.Coords = append(t.Coords, string(f))
					case resultColumns[lf]:
					default:
						return nil, sc.Errorf("unknown column %.40q (want x, y, z or x0..xN, layer, weight)", f)
					}
				}
				if weightCol < 0 {
					return nil, sc.Errorf("header %.80q has no weight column", line)
				}
				if len(coordCol) == 0 {
					return nil, sc.Errorf("header %.80q has no coordinate columns", line)
				}
				t.Layer = layerCol >= 0
				t.Points.Coords = make([][]float64, len(coordCol))
				continue
			}
			if ncol != 4 {
				return nil, sc.Errorf("no header and %d columns; without a header the columns are x,y,layer,weight", ncol)
			}
			coordCol, layerCol, weightCol = []int{0, 1}, 2, 3
			t.Coords, t.Layer = []string{"x", "y"}, true
			t.Points.Coords = make([][]float64, 2)
		}
		if len(fields) != ncol {
			return nil, sc.Errorf("%d fields, want %d", len(fields), ncol)
		}
		for d, c := range coordCol {
			v, ok := textscan.ParseFloat(fields[c])
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, sc.Errorf("coordinate %s = %q is not a finite number", t.Coords[d], fields[c])
			}
			t.Points.Coords[d] = append(t.Points.Coords[d], v)
		}
		if layerCol >= 0 {
			l, ok := textscan.ParseInt(fields[layerCol])
			if !ok {
				f, fok := textscan.ParseFloat(fields[layerCol])
				if !fok || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
					return nil, sc.Errorf("layer %q is not an integer", fields[layerCol])
				}
				l = int64(f)
			}
			if l > math.MaxInt32 || l < math.MinInt32 {
				return nil, sc.Errorf("layer %q is not an integer", fields[layerCol])
			}
			t.Points.Layer = append(t.Points.Layer, int32(l))
		}
		w, ok := textscan.ParseFloat(fields[weightCol])
		if !ok || !(w >= 0) || math.IsInf(w, 0) {
			return nil, sc.Errorf("weight %q is not a finite number >= 0", fields[weightCol])
		}
		t.Points.Weight = append(t.Points.Weight, w)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if ncol == 0 {
		return nil, fmt.Errorf("clue csv: %s: no header and no points", name)
	}
	return t, nil
}

// WritePoints writes the table's points alone.
func WritePoints(w io.Writer, t *Table) error { return Write(w, t, nil) }

// Write writes the table's points with the result columns (none when r is
// nil); large tables are formatted in parts on all cores.
func Write(w io.Writer, t *Table, r *clue.Result) error {
	bw := bufio.NewWriterSize(w, textparts.BufferSize)
	hdr := append([]string{}, t.Coords...)
	if t.Layer {
		hdr = append(hdr, "layer")
	}
	hdr = append(hdr, "weight")
	if r != nil {
		hdr = append(hdr, "rho", "delta", "nh", "isSeed", "clusterId")
	}
	bw.WriteString(strings.Join(hdr, ",") + "\n")
	var parts textparts.Parts
	if err := parts.Write(bw, t.Points.Len(), func(b []byte, lo, hi int) []byte { return appendRows(b, t, r, lo, hi) }); err != nil {
		return err
	}
	return bw.Flush()
}

// appendRows appends the rows of points [lo, hi).
func appendRows(b []byte, t *Table, r *clue.Result, lo, hi int) []byte {
	p := &t.Points
	for i := lo; i < hi; i++ {
		for d := range p.Coords {
			b = textfmt.AppendFloat(b, p.Coords[d][i])
			b = append(b, ',')
		}
		if t.Layer {
			b = textfmt.AppendInt(b, int64(p.Layer[i]))
			b = append(b, ',')
		}
		b = textfmt.AppendFloat(b, p.Weight[i])
		if r != nil {
			b = append(b, ',')
			b = textfmt.AppendFloat(b, r.Rho[i])
			b = append(b, ',')
			if math.IsInf(r.Delta[i], 1) {
				b = append(b, "inf"...)
			} else {
				b = textfmt.AppendFloat(b, r.Delta[i])
			}
			b = append(b, ',')
			b = textfmt.AppendInt(b, int64(r.NH[i]))
			b = append(b, ',')
			b = append(b, "01"[b2i(r.IsSeed[i])])
			b = append(b, ',')
			b = textfmt.AppendInt(b, int64(r.ClusterID[i]))
		}
		b = append(b, '\n')
	}
	return b
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
