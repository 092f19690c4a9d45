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
		t, okt := fieldTime(f[cols[2]])
		tot, okv := textscan.ParseInt(f[cols[3]])
		switch {
		case !okx || !oky:
			return tr.sc.Errorf("pixel (%q, %q) is not a pair of integers", f[cols[0]], f[cols[1]])
		case !okt:
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
		dst.Append(uint16(x), uint16(y), t, uint16(tot))
		return nil
	}
	tr.bulk = func(text []byte, dst *pixel.Hits) (int, int64) {
		if cols != [4]int{0, 1, 2, 3} {
			return 0, 0
		}
		return csvBulk(text, dst)
	}
	return tr
}

// csvBulk parses the leading lines of text that have the common form
// "x,y,toa_ns,tot" (plain unsigned decimals, the pixel and the ToT of at
// most five digits; columns after tot, as --hits writes, skipped unless
// quoted; each line ended by "\n" or "\r\n") into dst, as the line parser
// would; it stops at the first other line, and returns the bytes and the
// lines it took. A tight loop with the hits written in place: the lines
// of a hit file are almost all of this form.
func csvBulk(text []byte, dst *pixel.Hits) (int, int64) {
	text = text[:bytes.LastIndexByte(text, '\n')+1]
	most := bytes.Count(text, []byte{'\n'})
	if most == 0 {
		return 0, 0
	}
	base := dst.Len()
	dst.Reserve(most)
	xs, ys, ts, tots := dst.X[base:base+most], dst.Y[base:base+most], dst.ToA[base:base+most], dst.ToT[base:base+most]
	k, at := 0, 0 // the hits, and where the line being parsed starts
	for k < most {
		x, i, ok := small(text, at)
		if !ok || text[i] != ',' {
			break
		}
		y, i, ok := small(text, i+1)
		if !ok || text[i] != ',' {
			break
		}
		t, i, ok := nanoseconds(text, i+1)
		if !ok || text[i] != ',' {
			break
		}
		tot, i, ok := small(text, i+1)
		if !ok {
			break
		}
		if text[i] == ',' { // columns the reader ignores
			n := bytes.IndexByte(text[i:], '\n')
			if bytes.IndexByte(text[i:i+n], '"') >= 0 {
				break
			}
			i += n
		} else if text[i] == '\r' {
			i++
		}
		if text[i] != '\n' {
			break
		}
		xs[k], ys[k], ts[k], tots[k] = uint16(x), uint16(y), t, uint16(tot)
		k++
		at = i + 1
	}
	dst.X, dst.Y, dst.ToA, dst.ToT = dst.X[:base+k], dst.Y[:base+k], dst.ToA[:base+k], dst.ToT[:base+k]
	return at, int64(k)
}

// small reads the unsigned decimal of one to five digits at text[i:], at
// most 0xFFFF, and returns it and the index of the byte after it, which
// text must have.
func small(text []byte, i int) (uint32, int, bool) {
	var v uint32
	j := i
	for ; text[j]-'0' < 10; j++ {
		v = v*10 + uint32(text[j]-'0')
	}
	return v, j, j > i && j-i <= 5 && v <= 0xFFFF
}

// unsigned reads the unsigned decimal of one to 17 digits at text[i:] (as
// scanDecimals takes them), and returns it and the index of the byte
// after it, which text must have.
func unsigned(text []byte, i int) (int64, int, bool) {
	var v int64
	j := i
	for ; text[j]-'0' < 10; j++ {
		v = v*10 + int64(text[j]-'0')
	}
	return v, j, j > i && j-i <= 17
}

// nanoseconds reads an unsigned plain decimal at text[i:] as a time, as
// scanDecimals and decimal.time do, and returns it and the index of the
// byte after it, which text must have.
func nanoseconds(text []byte, i int) (pixel.Time, int, bool) {
	var mant int64
	j := i
	for ; text[j]-'0' < 10; j++ {
		mant = mant*10 + int64(text[j]-'0')
	}
	digits, scale := j-i, 0
	if text[j] == '.' {
		j++
		f := j
		for ; text[j]-'0' < 10; j++ {
			mant = mant*10 + int64(text[j]-'0')
		}
		scale = j - f
		digits += scale
	}
	if digits == 0 || digits > 17 {
		return 0, j, false
	}
	t, ok := decimal{mant, scale}.time()
	return t, j, ok
}

// fieldTime reads a toa_ns field exactly, as the fast paths do, when it
// is a plain decimal that fits decimal.time; else through its float
// (exponents, 18 digits and more). So a line's time does not depend on
// whether its other fields send it to the slow path.
func fieldTime(f []byte) (pixel.Time, bool) {
	var d [1]decimal
	if n, ok := scanDecimals(f, ',', d[:]); ok && n == 1 {
		if t, ok := d[0].time(); ok {
			return t, true
		}
	}
	ns, ok := textscan.ParseFloat(f)
	if !ok || math.IsNaN(ns) || math.Abs(ns) > 1e17 {
		return 0, false
	}
	return pixel.TimeFromNs(ns), true
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
