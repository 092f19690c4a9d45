package tpx3

import (
	"io"
	"math"
	"runtime"

	"github.com/hitflow/hitflow/internal/ctxio"
	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// labelColumns are the columns of a per-hit label file, as written by
// [CSVWriter] with labels.
var labelColumns = [5]string{"x", "y", "toa_ns", "tot", "cluster"}

// ReadLabelled reads a per-hit label file (x,y,toa_ns,tot,cluster with a
// header naming the columns, in any order, among others such as
// energy_kev) whole, in blocks cut into parts parsed on every core.
func ReadLabelled(r io.Reader, name string) (*pixel.Labelled, error) {
	return readLabelled(r, name, labelBlock, runtime.GOMAXPROCS(0))
}

// labelBlock is how much text ReadLabelled parses at a time.
const labelBlock = 4 << 20

// readLabelled is ReadLabelled with blocks of about block bytes cut into
// workers parts.
func readLabelled(r io.Reader, name string, block, workers int) (*pixel.Labelled, error) {
	sc := textscan.New(r, name, "labels")
	rows := &labelRows{l: &pixel.Labelled{}}
	header := false
	for line := range sc.Lines() {
		if textscan.Skip(line) {
			continue
		}
		fields := textscan.Fields(nil, line, ',')
		for k, want := range labelColumns {
			rows.cols[k] = -1
			for i, f := range fields {
				if string(f) == want {
					rows.cols[k] = i
				}
			}
			if rows.cols[k] < 0 {
				return rows.l, sc.Errorf("header %.80q has no column %q", line, want)
			}
		}
		header, rows.width = true, maxIndex(rows.cols)+1
		break
	}
	if err := sc.Err(); err != nil {
		return rows.l, err
	}
	if !header {
		return rows.l, sc.Errorf("no header line naming x, y, toa_ns, tot, cluster")
	}
	_, err := sc.ReadRows(rows, 0, block, workers, ctxio.Size(r), nil)
	return rows.l, err
}

// labelRows are the hits and labels of a label file, for
// textscan.ReadRows: the columns of the fields a row needs, from the
// header.
type labelRows struct {
	l     *pixel.Labelled
	cols  [5]int
	width int
}

func (r *labelRows) Resize(n, room int) {
	h := &r.l.Hits
	h.X, h.Y, h.ToA, h.ToT = textscan.Resize(h.X, n, room), textscan.Resize(h.Y, n, room), textscan.Resize(h.ToA, n, room), textscan.Resize(h.ToT, n, room)
	r.l.Labels = textscan.Resize(r.l.Labels, n, room)
}

func (r *labelRows) Move(to, from, n int) {
	h := &r.l.Hits
	copy(h.X[to:], h.X[from:from+n])
	copy(h.Y[to:], h.Y[from:from+n])
	copy(h.ToA[to:], h.ToA[from:from+n])
	copy(h.ToT[to:], h.ToT[from:from+n])
	copy(r.l.Labels[to:], r.l.Labels[from:from+n])
}

// Parse reads the hits of a part's lines into the rows from at on.
func (r *labelRows) Parse(sc *textscan.Scanner, at int) (int, error) {
	h, labels, cols := &r.l.Hits, r.l.Labels, r.cols
	var fields [][]byte
	var nums [16]decimal
	i := at
	for line := range sc.Lines() {
		if textscan.Skip(line) {
			continue
		}
		// The fast path: every field a plain decimal, as --hits writes.
		if n, ok := scanDecimals(line, ',', nums[:]); ok && n >= r.width {
			x, okx := nums[cols[0]].integer()
			y, oky := nums[cols[1]].integer()
			t, okt := nums[cols[2]].time()
			tot, okv := nums[cols[3]].integer()
			label, okl := nums[cols[4]].integer()
			if okx && oky && okt && okv && okl && x >= 0 && y >= 0 && x <= math.MaxUint16 && y <= math.MaxUint16 && tot >= 0 && tot <= math.MaxUint16 {
				h.X[i], h.Y[i], h.ToA[i], h.ToT[i], labels[i] = uint16(x), uint16(y), t, uint16(tot), label
				i++
				continue
			}
		}
		fields = textscan.Fields(fields, line, ',')
		if len(fields) < r.width {
			return i - at, sc.Errorf("%d fields, want %d", len(fields), r.width)
		}
		x, okx := textscan.ParseInt(fields[cols[0]])
		y, oky := textscan.ParseInt(fields[cols[1]])
		t, okt := fieldTime(fields[cols[2]])
		tot, okv := textscan.ParseInt(fields[cols[3]])
		label, okl := textscan.ParseInt(fields[cols[4]])
		switch {
		case !okx || !oky || x < 0 || y < 0 || x > math.MaxUint16 || y > math.MaxUint16:
			return i - at, sc.Errorf("pixel (%q, %q) is not a pair of integers 0..65535", fields[cols[0]], fields[cols[1]])
		case !okt:
			return i - at, sc.Errorf("toa_ns %q is not a finite time", fields[cols[2]])
		case !okv || tot < 0 || tot > math.MaxUint16:
			return i - at, sc.Errorf("tot %q is not an integer 0..65535", fields[cols[3]])
		case !okl:
			return i - at, sc.Errorf("cluster %q is not an integer", fields[cols[4]])
		}
		h.X[i], h.Y[i], h.ToA[i], h.ToT[i], labels[i] = uint16(x), uint16(y), t, uint16(tot), label
		i++
	}
	return i - at, sc.Err()
}

func maxIndex(cols [5]int) int {
	m := 0
	for _, c := range cols {
		m = max(m, c)
	}
	return m
}
