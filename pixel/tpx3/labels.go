package tpx3

import (
	"bytes"
	"io"
	"math"

	"github.com/hitflow/hitflow/pixel"
)

// labelColumns are the columns of a per-hit label file, as written by
// [CSVWriter] with labels.
var labelColumns = [5]string{"x", "y", "toa_ns", "tot", "cluster"}

// ReadLabelled reads a per-hit label file (x,y,toa_ns,tot,cluster with a
// header naming the columns, in any order, among others such as
// energy_kev) whole.
func ReadLabelled(r io.Reader, name string) (*pixel.Labelled, error) {
	sc := newLineScanner(r, name, "labels")
	l := &pixel.Labelled{}
	var cols [5]int
	var fields [][]byte
	header := false
	for {
		line, err := sc.next()
		if err == io.EOF {
			if !header {
				return l, sc.errorf("no header line naming x, y, toa_ns, tot, cluster")
			}
			return l, nil
		}
		if err != nil {
			return l, err
		}
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		fields = splitFields(fields, line, ',', false)
		if !header {
			for k, want := range labelColumns {
				cols[k] = -1
				for i, f := range fields {
					if string(f) == want {
						cols[k] = i
					}
				}
				if cols[k] < 0 {
					return l, sc.errorf("header %.80q has no column %q", line, want)
				}
			}
			header = true
			continue
		}
		if maxIndex(cols) >= len(fields) {
			return l, sc.errorf("%d fields, want %d", len(fields), maxIndex(cols)+1)
		}
		x, okx := parseInt(fields[cols[0]])
		y, oky := parseInt(fields[cols[1]])
		ns, okt := parseFloat(fields[cols[2]])
		tot, okv := parseInt(fields[cols[3]])
		label, okl := parseInt(fields[cols[4]])
		switch {
		case !okx || !oky || x < 0 || y < 0 || x > math.MaxUint16 || y > math.MaxUint16:
			return l, sc.errorf("pixel (%q, %q) is not a pair of integers 0..65535", fields[cols[0]], fields[cols[1]])
		case !okt || math.IsNaN(ns) || math.Abs(ns) > 1e17:
			return l, sc.errorf("toa_ns %q is not a finite time", fields[cols[2]])
		case !okv || tot < 0 || tot > math.MaxUint16:
			return l, sc.errorf("tot %q is not an integer 0..65535", fields[cols[3]])
		case !okl:
			return l, sc.errorf("cluster %q is not an integer", fields[cols[4]])
		}
		l.Hits.Append(uint16(x), uint16(y), pixel.TimeFromNs(ns), uint16(tot))
		l.Labels = append(l.Labels, label)
	}
}

func maxIndex(cols [5]int) int {
	m := 0
	for _, c := range cols {
		m = max(m, c)
	}
	return m
}
