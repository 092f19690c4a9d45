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
	"bytes"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/internal/ctxio"
	"github.com/hitflow/hitflow/internal/textfmt"
	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/internal/textscan"
)

// Table is a point set with the names of its columns.
type Table struct {
	Coords []string // coordinate column names, in order
	Layer  bool     // the file had a layer column
	Event  bool     // the file had an event column
	Points clue.Points
}

// isCoord reports whether a header name, in lower case, is a
// coordinate's: x, y, z, or x and a number (x0, x1, ...). A function, not
// a regular expression: one compiled at start-up delays every command of
// the program, most of which never read a CLUE file.
func isCoord(name string) bool {
	switch {
	case name == "x" || name == "y" || name == "z":
		return true
	case len(name) < 2 || name[0] != 'x':
		return false
	}
	for _, c := range []byte(name[1:]) {
		if c-'0' > 9 {
			return false
		}
	}
	return true
}

var resultColumns = map[string]bool{"rho": true, "delta": true, "nh": true, "isseed": true, "clusterid": true}

// columns say where a file's values are.
type columns struct {
	n                    int   // fields a line
	coord                []int // the coordinates' fields
	layer, event, weight int   // fields; layer and event -1 when absent
	names                []string
	roles                []int8 // what each field is, for parseFast; nil without it
	skips                bool   // some fields are skipped (result columns)
}

// The roles of fields other than coordinates, which are their index.
const (
	skipField int8 = -1 - iota // a result column
	layerField
	eventField
	weightField
)

// setRoles fills roles from the fields' places.
func (c *columns) setRoles() {
	c.roles = make([]int8, c.n)
	for f := range c.roles {
		c.roles[f] = skipField
	}
	for d, f := range c.coord {
		c.roles[f] = int8(d)
	}
	for _, r := range []struct {
		field int
		role  int8
	}{{c.layer, layerField}, {c.event, eventField}, {c.weight, weightField}} {
		if r.field >= 0 {
			c.roles[r.field] = r.role
		}
	}
	c.skips = slices.Contains(c.roles, skipField)
}

// blockSize is how much text Read parses at a time, in parts on all
// cores.
const blockSize = 4 << 20

// Read parses a CSV point file; errors name the file and the line. The
// lines after the header are parsed in parts on all cores.
func Read(r io.Reader, name string) (*Table, error) {
	return read(r, name, blockSize, runtime.GOMAXPROCS(0), true)
}

// read is Read with blocks of about block bytes cut into workers parts,
// with parseFast or without it.
func read(r io.Reader, name string, block, workers int, fast bool) (*Table, error) {
	sc := textscan.New(r, name, "clue csv")
	t := &Table{}
	var first []byte
	for line := range sc.Lines() {
		if !textscan.Skip(line) {
			first = line
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if first == nil {
		return nil, fmt.Errorf("clue csv: %s: no header and no points", name)
	}
	// The first line: a header, or four bare columns and a point.
	fields := textscan.Fields(nil, first, ',')
	c := columns{n: len(fields), layer: -1, event: -1, weight: -1}
	header := false
	if _, ok := textscan.ParseFloat(fields[0]); !ok {
		header = true
		for i, f := range fields {
			switch lf := strings.ToLower(string(f)); {
			case lf == "layer":
				c.layer = i
			case lf == "event":
				c.event = i
			case lf == "weight":
				c.weight = i
			case isCoord(lf):
				c.coord = append(c.coord, i)
				c.names = append(c.names, string(f))
			case resultColumns[lf]:
			default:
				return nil, sc.Errorf("unknown column %.40q (want x, y, z or x0..xN, layer, event, weight)", f)
			}
		}
		if c.weight < 0 {
			return nil, sc.Errorf("header %.80q has no weight column", first)
		}
		if len(c.coord) == 0 {
			return nil, sc.Errorf("header %.80q has no coordinate columns", first)
		}
	} else {
		if c.n != 4 {
			return nil, sc.Errorf("no header and %d columns; without a header the columns are x,y,layer,weight", c.n)
		}
		c.coord, c.layer, c.weight, c.names = []int{0, 1}, 2, 3, []string{"x", "y"}
	}
	if len(c.coord) > math.MaxInt8 {
		return nil, sc.Errorf("%d coordinates; at most %d", len(c.coord), math.MaxInt8)
	}
	if fast {
		c.setRoles()
	}
	t.Coords, t.Layer, t.Event = c.names, c.layer >= 0, c.event >= 0
	t.Points.Coords = make([][]float64, len(c.coord))
	if !header {
		c.resize(&t.Points, 1, 1)
		if err := c.parse(sc, fields, &t.Points, 0); err != nil {
			return nil, err
		}
	}
	if _, err := sc.ReadRows(pointRows{&c, &t.Points}, t.Points.Len(), block, workers, ctxio.Size(r), nil); err != nil {
		return nil, err
	}
	return t, nil
}

// pointRows are the rows of a table's points, for textscan.ReadRows.
type pointRows struct {
	c *columns
	p *clue.Points
}

func (r pointRows) Resize(n, room int) { r.c.resize(r.p, n, room) }

func (r pointRows) Parse(p *textscan.Scanner, at int) (int, error) { return r.c.parsePart(p, r.p, at) }

func (r pointRows) Move(to, from, n int) { r.c.move(r.p, to, from, n) }

// resize sets the length of the point columns the file has to n, with
// room for at least room.
func (c *columns) resize(p *clue.Points, n, room int) {
	for d := range p.Coords {
		p.Coords[d] = textscan.Resize(p.Coords[d], n, room)
	}
	if c.layer >= 0 {
		p.Layer = textscan.Resize(p.Layer, n, room)
	}
	if c.event >= 0 {
		p.Event = textscan.Resize(p.Event, n, room)
	}
	p.Weight = textscan.Resize(p.Weight, n, room)
}

// move moves n rows of the file's columns from from to to.
func (c *columns) move(p *clue.Points, to, from, n int) {
	for d := range p.Coords {
		copy(p.Coords[d][to:], p.Coords[d][from:from+n])
	}
	if c.layer >= 0 {
		copy(p.Layer[to:], p.Layer[from:from+n])
	}
	if c.event >= 0 {
		copy(p.Event[to:], p.Event[from:from+n])
	}
	copy(p.Weight[to:], p.Weight[from:from+n])
}

// parsePart parses the lines of a part into dst's rows from at on,
// returning how many it filled.
func (c *columns) parsePart(sc *textscan.Scanner, dst *clue.Points, at int) (int, error) {
	var fields [][]byte
	i := at
	for line := range sc.Lines() {
		if c.roles != nil && c.parseFast(line, dst, i) {
			i++
			continue
		}
		if textscan.Skip(line) {
			continue
		}
		fields = textscan.Fields(fields, line, ',')
		if err := c.parse(sc, fields, dst, i); err != nil {
			return 0, err
		}
		i++
	}
	return i - at, sc.Err()
}

// parseFast sets row i of dst from a line in the common form, read
// without cutting it into fields first: plain decimals (whole ones for
// layer and event) between single commas, nothing around them. Any other
// line (or value parse would refuse) it leaves to parse, which names the
// errors: false, whatever it set of the row.
func (c *columns) parseFast(line []byte, dst *clue.Points, i int) bool {
	if c.skips && bytes.IndexByte(line, '"') >= 0 { // a skipped field may hold commas
		return false
	}
	at := 0
	for f, role := range c.roles {
		if f > 0 {
			if at == len(line) || line[at] != ',' {
				return false
			}
			at++
		}
		if role == skipField {
			if j := bytes.IndexByte(line[at:], ','); j >= 0 {
				at += j
			} else {
				at = len(line)
			}
			continue
		}
		v, n, ok := textscan.Decimal(line[at:])
		if !ok {
			return false
		}
		at += n
		switch role {
		case layerField, eventField:
			if v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
				return false
			}
			if role == layerField {
				dst.Layer[i] = int32(v)
			} else {
				dst.Event[i] = int32(v)
			}
		case weightField:
			if !(v >= 0) {
				return false
			}
			dst.Weight[i] = v
		default:
			dst.Coords[role][i] = v
		}
	}
	return at == len(line)
}

// parse sets row i of dst to the point of a line's fields.
func (c *columns) parse(sc *textscan.Scanner, fields [][]byte, dst *clue.Points, i int) error {
	if len(fields) != c.n {
		return sc.Errorf("%d fields, want %d", len(fields), c.n)
	}
	for d, f := range c.coord {
		v, ok := textscan.ParseFloat(fields[f])
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			return sc.Errorf("coordinate %s = %q is not a finite number", c.names[d], fields[f])
		}
		dst.Coords[d][i] = v
	}
	if c.layer >= 0 {
		l, err := integer(sc, fields[c.layer], "layer")
		if err != nil {
			return err
		}
		dst.Layer[i] = l
	}
	if c.event >= 0 {
		e, err := integer(sc, fields[c.event], "event")
		if err != nil {
			return err
		}
		dst.Event[i] = e
	}
	w, ok := textscan.ParseFloat(fields[c.weight])
	if !ok || !(w >= 0) || math.IsInf(w, 0) {
		return sc.Errorf("weight %q is not a finite number >= 0", fields[c.weight])
	}
	dst.Weight[i] = w
	return nil
}

// integer parses an int32 column's field, which may be written as a
// float ("3.0").
func integer(sc *textscan.Scanner, f []byte, name string) (int32, error) {
	l, ok := textscan.ParseInt(f)
	if !ok {
		v, fok := textscan.ParseFloat(f)
		if !fok || v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
			return 0, sc.Errorf("%s %q is not an integer", name, f)
		}
		l = int64(v)
	}
	if l > math.MaxInt32 || l < math.MinInt32 {
		return 0, sc.Errorf("%s %q is not an integer", name, f)
	}
	return int32(l), nil
}

// WritePoints writes the table's points alone.
func WritePoints(w io.Writer, t *Table) error { return Write(w, t, nil) }

// Write writes the table's points with the result columns (none when r is
// nil); large tables are formatted in parts on all cores.
func Write(w io.Writer, t *Table, r *clue.Result) error {
	bw := bufio.NewWriterSize(w, textparts.BufferSize)
	hdr := append([]string{}, t.Coords...)
	if t.Event {
		hdr = append(hdr, "event")
	}
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

// appendRows appends the rows of points [lo, hi). The room for a row is
// reserved once, and its fields written in place.
func appendRows(b []byte, t *Table, r *clue.Result, lo, hi int) []byte {
	p := &t.Points
	// Room for the longest row: a float and its separator take at most
	// 25 bytes (PutFloat needs MaxFloatLen to write them), an integer
	// and its separator 12; a slot of MaxFloatLen for each coordinate and
	// seven more hold them all.
	room := (len(p.Coords) + 7) * textfmt.MaxFloatLen
	for i := lo; i < hi; i++ {
		b = slices.Grow(b, room)
		row := b[len(b) : len(b)+room]
		n := 0
		for d := range p.Coords {
			n += textfmt.PutFloat(row[n:], p.Coords[d][i])
			row[n] = ','
			n++
		}
		if t.Event {
			n += textfmt.PutInt(row[n:], int64(p.Event[i]))
			row[n] = ','
			n++
		}
		if t.Layer {
			n += textfmt.PutInt(row[n:], int64(p.Layer[i]))
			row[n] = ','
			n++
		}
		n += textfmt.PutFloat(row[n:], p.Weight[i])
		if r != nil {
			row[n] = ','
			n++
			n += textfmt.PutFloat(row[n:], r.Rho[i])
			row[n] = ','
			n++
			if math.IsInf(r.Delta[i], 1) {
				n += copy(row[n:], "inf")
			} else {
				n += textfmt.PutFloat(row[n:], r.Delta[i])
			}
			row[n] = ','
			n++
			n += textfmt.PutInt(row[n:], int64(r.NH[i]))
			row[n] = ','
			row[n+1] = "01"[b2i(r.IsSeed[i])]
			row[n+2] = ','
			n += 3
			n += textfmt.PutInt(row[n:], int64(r.ClusterID[i]))
		}
		row[n] = '\n'
		b = b[:len(b)+n+1]
	}
	return b
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
