package tpx3

import (
	"io"
	"math"
	"slices"

	"github.com/hitflow/hitflow/internal/ctxio"
	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// labelColumns are the columns of a per-hit label file, as written by
// [CSVWriter] with labels.
var labelColumns = [5]string{"x", "y", "toa_ns", "tot", "cluster"}

// ReadLabelled reads a per-hit label file (x,y,toa_ns,tot,cluster with a
// header naming the columns, in any order, among others such as
// energy_kev) whole.
func ReadLabelled(r io.Reader, name string) (*pixel.Labelled, error) {
	sc := textscan.New(r, name, "labels")
	l := &pixel.Labelled{}
	size := ctxio.Size(r)
	var cols [5]int
	var fields [][]byte
	var nums [16]decimal
	header, width := false, 0 // the fields a row needs, from the header
	for line := range sc.Lines() {
		if textscan.Skip(line) {
			continue
		}
		// The columns take, once, the rows the file's size promises at
		// the first lines' bytes a row, rather than growing again and
		// again.
		if n := l.Hits.Len(); n == textscan.SampleRows && size > 0 {
			more := sc.Rows(n, size) - n
			l.Hits.Reserve(more)
			l.Labels = slices.Grow(l.Labels, more)
		}
		// The fast path: every field a plain decimal, as --hits writes.
		if n, ok := scanDecimals(line, ',', nums[:]); ok && header && n >= width {
			x, okx := nums[cols[0]].integer()
			y, oky := nums[cols[1]].integer()
			t, okt := nums[cols[2]].time()
			tot, okv := nums[cols[3]].integer()
			label, okl := nums[cols[4]].integer()
			if okx && oky && okt && okv && okl && x >= 0 && y >= 0 && x <= math.MaxUint16 && y <= math.MaxUint16 && tot >= 0 && tot <= math.MaxUint16 {
				l.Hits.Append(uint16(x), uint16(y), t, uint16(tot))
				l.Labels = append(l.Labels, label)
				continue
			}
		}
		fields = textscan.Fields(fields, line, ',')
		if !header {
			for k, want := range labelColumns {
				cols[k] = -1
				for i, f := range fields {
					if string(f) == want {
						cols[k] = i
					}
				}
				if cols[k] < 0 {
					return l, sc.Errorf("header %.80q has no column %q", line, want)
				}
			}
			header, width = true, maxIndex(cols)+1
			continue
		}
		if len(fields) < width {
			return l, sc.Errorf("%d fields, want %d", len(fields), width)
		}
		x, okx := textscan.ParseInt(fields[cols[0]])
		y, oky := textscan.ParseInt(fields[cols[1]])
		t, okt := fieldTime(fields[cols[2]])
		tot, okv := textscan.ParseInt(fields[cols[3]])
		label, okl := textscan.ParseInt(fields[cols[4]])
		switch {
		case !okx || !oky || x < 0 || y < 0 || x > math.MaxUint16 || y > math.MaxUint16:
			return l, sc.Errorf("pixel (%q, %q) is not a pair of integers 0..65535", fields[cols[0]], fields[cols[1]])
		case !okt:
			return l, sc.Errorf("toa_ns %q is not a finite time", fields[cols[2]])
		case !okv || tot < 0 || tot > math.MaxUint16:
			return l, sc.Errorf("tot %q is not an integer 0..65535", fields[cols[3]])
		case !okl:
			return l, sc.Errorf("cluster %q is not an integer", fields[cols[4]])
		}
		l.Hits.Append(uint16(x), uint16(y), t, uint16(tot))
		l.Labels = append(l.Labels, label)
	}
	if err := sc.Err(); err != nil {
		return l, err
	}
	if !header {
		return l, sc.Errorf("no header line naming x, y, toa_ns, tot, cluster")
	}
	return l, nil
}

func maxIndex(cols [5]int) int {
	m := 0
	for _, c := range cols {
		m = max(m, c)
	}
	return m
}
