package tpx3

import (
	"bytes"
	"io"
	"math"
	"math/bits"

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
// lines it took. The lines go to csvWide, and those it leaves (near the
// end of text, or too long for its window) to csvLine: the lines of a hit
// file are almost all of this form.
func csvBulk(text []byte, dst *pixel.Hits) (int, int64) {
	return bulkLines(text, dst, csvWide, csvLine)
}

// csvLine parses the line of the common form at text[at:], which ends
// in text, a field after another: the loop's exits are the ends of the
// fields.
func csvLine(text []byte, at int) (h bulkHit, next int, ok bool) {
	vx, i, okx := small(text, at)
	if !okx || text[i] != ',' {
		return
	}
	vy, i, oky := small(text, i+1)
	if !oky || text[i] != ',' {
		return
	}
	vn, i, okn := nanoseconds(text, i+1)
	if !okn || text[i] != ',' {
		return
	}
	vt, i, okt := small(text, i+1)
	if !okt {
		return
	}
	if text[i] == ',' { // columns the reader ignores
		n := bytes.IndexByte(text[i:], '\n')
		if bytes.IndexByte(text[i:i+n], '"') >= 0 {
			return
		}
		i += n
	} else if text[i] == '\r' {
		i++
	}
	if text[i] != '\n' {
		return
	}
	return bulkHit{uint16(vx), uint16(vy), vn, uint16(vt)}, i + 1, true
}

// digitPair is the values of the first na digits of a and the first nb
// of b (1 to 4 each, as digits8 gives them), side by side in one word:
// two multiplications for both.
func digitPair(a uint64, na int, b uint64, nb int) (uint64, uint64) {
	sa, sb := (32-8*uint(na))&31, (32-8*uint(nb))&31
	x := uint64(uint32(a)<<sa) | uint64(uint32(b)<<sb)<<32
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	return x & 0xFFFF, x >> 32
}

// csvWide parses lines of the common form from text[at:] into h while
// they fit in w's window (lines up to 63 bytes to their separator), and
// returns how many it took and where the next line starts. A line's
// fields end at its next non-digits, taken one after the other from the
// window's mask, and a field's value is computed from its bytes at once,
// without a branch on its length: the lengths of the pixels (one to
// three digits) and of a time's decimals (none to four) change from line
// to line, which a loop a byte mispredicts at every field's end.
func csvWide(text []byte, at int, w *digitWindow, h bulkHits) (int, int) {
	xs, ys, ts, tots := h.x, h.y[:len(h.x)], h.t[:len(h.x)], h.tot[:len(h.x)]
	for k := range xs {
		if at-w.base >= 64 && !w.move(text, at) {
			return k, at
		}
		m := w.mask(at) // bit i: text[at+i] is not a digit
		p := text[at : at+128]
		e1 := bits.TrailingZeros64(m)
		m &= m - 1
		e2 := bits.TrailingZeros64(m)
		m &= m - 1
		e3 := bits.TrailingZeros64(m)
		m &= m - 1
		e4 := bits.TrailingZeros64(m)
		m &= m - 1
		e5 := bits.TrailingZeros64(m)
		// Without a point the time has no decimals and tot the field
		// after it: lf, c and end as if the point stood at e3.
		lf, c, end := 0, e3, e4
		if p[e3] == '.' {
			lf, c, end = e4-e3-1, e4, e5
		}
		lx, ly, lw, lt := e1, e2-e1-1, e3-e2-1, end-c-1
		if end >= 64 || p[e1] != ',' || p[e2] != ',' || p[c] != ',' ||
			uint(lx-1) >= 4 || uint(ly-1) >= 4 || uint(lt-1) >= 5 || lw > 16 || lf > 8 || uint(lw+lf-1) >= 17 {
			return k, at
		}
		x, y := digitPair(digits8(p, 0), lx, digits8(p, e1+1), ly)
		tot := digitsValue(digits8(p, c+1), lt)
		whole := digitsValue(digits8(p, e2+1), lw)
		if lw > 8 {
			whole = digitsValue(digits8(p, e2+1), lw-8)*1e8 + digitsValue(digits8(p, e2+1+lw-8), 8)
		}
		mant := int64(whole)*pow10[lf] + int64(digitsValue(digits8(p, e3+1), lf))
		if tot > 0xFFFF || mant > 1<<56 { // pixels of four digits fit
			return k, at
		}
		// The division by 10^lf is one by a constant (a multiplication):
		// the decimals are made six (as many as a 64th of a ns has), or
		// four (a Timepix3's fine ToA, 1.5625 ns) for times too long for
		// six; the same rounding as decimal.time (the half of 10^lf is
		// exact for lf > 0, and a half of 10^(6-lf) rounds nothing off
		// for lf = 0).
		var t pixel.Time
		switch {
		case lw <= 11 && lf <= 6:
			t = pixel.Time((mant*pow10[6-lf]*int64(pixel.Nanosecond) + 5e5) / 1e6)
		case lw <= 13 && lf <= 4:
			t = pixel.Time((mant*pow10[4-lf]*int64(pixel.Nanosecond) + 5e3) / 1e4)
		default:
			t, _ = decimal{mant, lf}.time()
		}
		switch p[end] {
		case '\n':
			end++
		case '\r':
			if p[end+1] != '\n' {
				return k, at
			}
			end += 2
		case ',': // columns the reader ignores
			n := bytes.IndexByte(text[at+end:], '\n')
			if bytes.IndexByte(text[at+end:at+end+n], '"') >= 0 {
				return k, at
			}
			end += n + 1
		default:
			return k, at
		}
		xs[k], ys[k], ts[k], tots[k] = uint16(x), uint16(y), t, uint16(tot)
		at += end
	}
	return len(xs), at
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
