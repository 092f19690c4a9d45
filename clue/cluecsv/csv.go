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
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/clue"
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	t := &Table{}
	var coordCol []int
	layerCol, weightCol := -1, -1
	ncol := 0
	line := 0
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("clue csv: %s: line %d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if ncol == 0 { // the first line: a header, or four bare columns
			ncol = len(fields)
			if _, err := strconv.ParseFloat(fields[0], 64); err != nil {
				for i, f := range fields {
					switch lf := strings.ToLower(f); {
					case lf == "layer":
						layerCol = i
					case lf == "weight":
						weightCol = i
					case coordName.MatchString(lf):
						coordCol = append(coordCol, i)
						t.Coords = append(t.Coords, f)
					case resultColumns[lf]:
					default:
						return nil, errorf("unknown column %.40q (want x, y, z or x0..xN, layer, weight)", f)
					}
				}
				if weightCol < 0 {
					return nil, errorf("header %.80q has no weight column", text)
				}
				if len(coordCol) == 0 {
					return nil, errorf("header %.80q has no coordinate columns", text)
				}
				t.Layer = layerCol >= 0
				t.Points.Coords = make([][]float64, len(coordCol))
				continue
			}
			if ncol != 4 {
				return nil, errorf("no header and %d columns; without a header the columns are x,y,layer,weight", ncol)
			}
			coordCol, layerCol, weightCol = []int{0, 1}, 2, 3
			t.Coords, t.Layer = []string{"x", "y"}, true
			t.Points.Coords = make([][]float64, 2)
		}
		if len(fields) != ncol {
			return nil, errorf("%d fields, want %d", len(fields), ncol)
		}
		for d, c := range coordCol {
			v, err := strconv.ParseFloat(fields[c], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errorf("coordinate %s = %q is not a finite number", t.Coords[d], fields[c])
			}
			t.Points.Coords[d] = append(t.Points.Coords[d], v)
		}
		if layerCol >= 0 {
			l, err := strconv.ParseInt(fields[layerCol], 10, 32)
			if err != nil {
				f, ferr := strconv.ParseFloat(fields[layerCol], 64)
				if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
					return nil, errorf("layer %q is not an integer", fields[layerCol])
				}
				l = int64(f)
			}
			t.Points.Layer = append(t.Points.Layer, int32(l))
		}
		w, err := strconv.ParseFloat(fields[weightCol], 64)
		if err != nil || !(w >= 0) || math.IsInf(w, 0) {
			return nil, errorf("weight %q is not a finite number >= 0", fields[weightCol])
		}
		t.Points.Weight = append(t.Points.Weight, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("clue csv: %s: line %d: %w", name, line+1, err)
	}
	if ncol == 0 {
		return nil, fmt.Errorf("clue csv: %s: no header and no points", name)
	}
	return t, nil
}

// WritePoints writes the table's points alone.
func WritePoints(w io.Writer, t *Table) error { return Write(w, t, nil) }

// Write writes the table's points with the result columns (none when r is
// nil).
func Write(w io.Writer, t *Table, r *clue.Result) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	hdr := append([]string{}, t.Coords...)
	if t.Layer {
		hdr = append(hdr, "layer")
	}
	hdr = append(hdr, "weight")
	if r != nil {
		hdr = append(hdr, "rho", "delta", "nh", "isSeed", "clusterId")
	}
	bw.WriteString(strings.Join(hdr, ",") + "\n")
	var b []byte
	p := &t.Points
	for i := range p.Len() {
		b = b[:0]
		for d := range p.Coords {
			b = strconv.AppendFloat(b, p.Coords[d][i], 'g', -1, 64)
			b = append(b, ',')
		}
		if t.Layer {
			b = strconv.AppendInt(b, int64(p.Layer[i]), 10)
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, p.Weight[i], 'g', -1, 64)
		if r == nil {
			b = append(b, '\n')
			if _, err := bw.Write(b); err != nil {
				return err
			}
			continue
		}
		b = append(b, ',')
		b = strconv.AppendFloat(b, r.Rho[i], 'g', -1, 64)
		b = append(b, ',')
		if math.IsInf(r.Delta[i], 1) {
			b = append(b, "inf"...)
		} else {
			b = strconv.AppendFloat(b, r.Delta[i], 'g', -1, 64)
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.NH[i]), 10)
		b = append(b, ',')
		b = append(b, "01"[b2i(r.IsSeed[i])])
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.ClusterID[i]), 10)
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
