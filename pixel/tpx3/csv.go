package tpx3

import (
	"bytes"
	"io"
	"math"

	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// NewCSVReader decodes hits as CSV with the columns x, y, toa_ns and tot.
// A header line, recognised by a first field that is not a number, may
// name the columns in any order and add others (they are ignored, so a
// file written with --hits reads back). Without a header the first four
// columns are x, y, toa_ns, tot.
func NewCSVReader(r io.Reader, name string) Reader {
	tr := newTextReader(r, name, "csv")
	cols := [4]int{0, 1, 2, 3}
	width := 4
	tr.ready = func() bool { return tr.sc.Line() >= 1 } // a header is the first line
	tr.parse = func(tr *lineState, line []byte, dst *pixel.Hits) error {
		if n, ok := scanDecimals(line, ',', tr.nums[:]); ok && n >= width {
			x, okx := tr.nums[cols[0]].integer()
			y, oky := tr.nums[cols[1]].integer()
			t, okt := tr.nums[cols[2]].time()
			tot, okv := tr.nums[cols[3]].integer()
			if okx && oky && okt && okv && x >= 0 && y >= 0 && x <= 0xFFFF && y <= 0xFFFF && tot >= 0 && tot <= 0xFFFF {
				dst.Append(uint16(x), uint16(y), t, uint16(tot))
				return nil
			}
		}
		// The slow path: header, comments, and errors named precisely.
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			tr.stats.Comments++
			return nil
		}
		tr.fields = textscan.Fields(tr.fields, line, ',')
		f := tr.fields
		if tr.sc.Line() == 1 {
			if _, ok := textscan.ParseFloat(f[0]); !ok {
				return header(tr.sc, f, &cols, &width)
			}
		}
		if len(f) < width {
			return tr.sc.Errorf("%d fields, want at least %d", len(f), width)
		}
		x, okx := textscan.ParseInt(f[cols[0]])
		y, oky := textscan.ParseInt(f[cols[1]])
		ns, okt := textscan.ParseFloat(f[cols[2]])
		tot, okv := textscan.ParseInt(f[cols[3]])
		switch {
		case !okx || !oky:
			return tr.sc.Errorf("pixel (%q, %q) is not a pair of integers", f[cols[0]], f[cols[1]])
		case !okt || math.IsNaN(ns) || math.Abs(ns) > 1e17:
			return tr.sc.Errorf("toa_ns %q is not a finite time", f[cols[2]])
		case !okv:
			return tr.sc.Errorf("tot %q is not an integer", f[cols[3]])
		}
		if err := checkToT(tr.sc, tot); err != nil {
			return err
		}
		if x < 0 || y < 0 || x > 0xFFFF || y > 0xFFFF {
			tr.stats.OutOfRange++
			return nil
		}
		dst.Append(uint16(x), uint16(y), pixel.TimeFromNs(ns), uint16(tot))
		return nil
	}
	return tr
}

func header(sc *textscan.Scanner, f [][]byte, cols *[4]int, width *int) error {
	*width = 0
	for k, name := range []string{"x", "y", "toa_ns", "tot"} {
		cols[k] = -1
		for i, h := range f {
			if string(bytes.ToLower(h)) == name {
				cols[k] = i
				*width = max(*width, i+1)
			}
		}
		if cols[k] < 0 {
			return sc.Errorf("header lacks the column %q (want x,y,toa_ns,tot)", name)
		}
	}
	return nil
}
