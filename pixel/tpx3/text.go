package tpx3

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"unsafe"

	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// streamBuffer is the read buffer of the hit text readers.
const streamBuffer = 1 << 20

// sensor bounds the pixel coordinates a text reader accepts.
type sensor struct{ width, height int }

// appendLinear adds a hit given by a linear pixel index y*width + x, or
// counts it as out of range.
func (s sensor) appendLinear(dst *pixel.Hits, st *Stats, idx int64, t pixel.Time, tot int64) {
	if idx < 0 || idx >= int64(s.width)*int64(s.height) {
		st.OutOfRange++
		return
	}
	dst.Append(uint16(idx%int64(s.width)), uint16(idx/int64(s.width)), t, uint16(tot))
}

// lineState is what parsing a line takes besides the line: the scanner
// it came from (for errors), scratch, and the counts.
type lineState struct {
	sc     *textscan.Scanner
	fields [][]byte
	nums   [64]decimal // fast-path fields
	stats  Stats
}

// textReader drives a line format: parse turns one line into a hit. The
// lines up to the header (ready reports when it has been read) are
// parsed one by one; the rest in blocks, each cut into parts parsed on
// all cores, the hits put together in the order of the lines. Once ready,
// parse only reads what the header set.
type textReader struct {
	sc    *textscan.Scanner
	head  lineState
	parts []lineState
	hits  []pixel.Hits // the parts' hits, in dst's storage
	at    []int        // the row of a part's first line
	errs  []error
	// next is the block read while the last one was parsed.
	next    textscan.Block
	nextErr error
	reading bool
	stats   Stats
	err     error
	block   int // bytes of text a Read parses
	ready   func() bool
	parse   func(st *lineState, line []byte, dst *pixel.Hits) error
	// bulk, when set, is a fast path that parses the leading lines of
	// text that are in the format's common form into dst and returns the
	// bytes and lines it took; parse takes the line it stops at.
	bulk func(text []byte, dst *pixel.Hits) (n int, lines int64)
}

// blockBytes is how much text a Read parses: about 60,000 hits of CSV.
const blockBytes = 2 << 20

func newTextReader(in io.Reader, name, format string) *textReader {
	sc := textscan.NewSize(in, name, format, streamBuffer)
	r := &textReader{sc: sc, head: lineState{sc: sc}, block: blockBytes, ready: func() bool { return true }}
	r.setParts(runtime.GOMAXPROCS(0))
	return r
}

// setParts sets how many parts a block is cut into.
func (r *textReader) setParts(k int) {
	r.parts, r.hits, r.at, r.errs = make([]lineState, k), make([]pixel.Hits, k), make([]int, k), make([]error, k)
}

func (r *textReader) Stats() Stats { return r.stats }

func (r *textReader) Read(dst *pixel.Hits) error {
	dst.Reset()
	if r.err != nil {
		return r.err
	}
	r.err = r.read(dst)
	r.stats.Hits += int64(dst.Len())
	return r.err
}

func (r *textReader) read(dst *pixel.Hits) error {
	for !r.ready() {
		line, err := r.sc.Next()
		if err == nil {
			err = r.parse(&r.head, line, dst)
		}
		r.count(&r.head, r.sc)
		if err != nil {
			return err
		}
	}
	blk, err := r.next, r.nextErr
	if !r.reading {
		blk, err = r.sc.Block(r.block)
	}
	r.reading = false
	if err != nil {
		r.stats.Lines, r.stats.Bytes = r.sc.Line(), r.sc.Offset()
		return err
	}
	// Each part parses into dst's storage from the row of its first line
	// on (a line makes one hit at most), and the next block is read
	// meanwhile.
	parts := blk.Parts(len(r.parts))
	rows := dst.Len() // after the hits of lines before the header's end
	for k, p := range parts {
		r.at[k] = rows
		rows += int(p.Count())
	}
	dst.Reserve(rows - dst.Len())
	var wg sync.WaitGroup
	for k, p := range parts {
		st, h, at := &r.parts[k], &r.hits[k], r.at[k]
		st.sc = p
		end := at + int(p.Count())
		*h = pixel.Hits{X: dst.X[at:at:end], Y: dst.Y[at:at:end], ToA: dst.ToA[at:at:end], ToT: dst.ToT[at:at:end]}
		wg.Go(func() { r.errs[k] = r.parsePart(st, p, h) })
	}
	r.reading = true
	wg.Go(func() { r.next, r.nextErr = r.sc.Block(r.block) })
	wg.Wait()
	for k, p := range parts {
		// Hits already in their place are taken as they lie; the others
		// (behind lines that made none, or in storage of their own) are
		// appended, which closes up the rows.
		h, end := &r.hits[k], dst.Len()
		if n := h.Len(); end == r.at[k] && n > 0 && unsafe.SliceData(h.ToA) == unsafe.SliceData(dst.ToA[end:end+1]) && !h.Calibrated() {
			dst.X, dst.Y, dst.ToA, dst.ToT = dst.X[:end+n], dst.Y[:end+n], dst.ToA[:end+n], dst.ToT[:end+n]
		} else {
			dst.AppendRange(h, 0, n)
		}
		r.count(&r.parts[k], p)
		if r.errs[k] != nil {
			return r.errs[k]
		}
	}
	return nil
}

// parsePart parses the lines of a part into h: runs of them by bulk, the
// others (and all of them without bulk) one by one. A part whose lines
// bulk does not take twice in a row (a form it does not know) is parsed
// line by line from there on.
func (r *textReader) parsePart(st *lineState, p *textscan.Scanner, h *pixel.Hits) error {
	bulk, missed := r.bulk, 0
	for {
		if bulk != nil {
			n, lines := bulk(p.Rest(), h)
			p.Advance(n, lines)
			if missed = missed + 1; lines > 0 {
				missed = 0
			}
			if missed == 2 {
				bulk = nil
			}
		}
		line, err := p.Next()
		if err == io.EOF {
			return nil
		}
		if err == nil {
			err = r.parse(st, line, h)
		}
		if err != nil {
			return err
		}
	}
}

// count adds the counts of a part (or of the header's lines) to the
// reader's and clears them; lines and bytes are those read up to the end
// of the part, or of the line that failed.
func (r *textReader) count(st *lineState, sc *textscan.Scanner) {
	r.stats.OutOfRange += st.stats.OutOfRange
	r.stats.Comments += st.stats.Comments
	r.stats.Lines, r.stats.Bytes = sc.Line(), sc.Offset()
	st.stats = Stats{}
}

// checkToT rejects a ToT that does not fit the 16-bit hit model.
func checkToT(sc *textscan.Scanner, tot int64) error {
	if tot < 0 || tot > 0xFFFF {
		return sc.Errorf("ToT %d out of range 0..65535", tot)
	}
	return nil
}

// blank is white space other than the separator; a space separator
// stands for any run of white space.
func blank(c, sep byte) bool { return (c == ' ' || c == '\t') && (c != sep || sep == ' ') }

// decimal is a number read exactly: mant / 10^scale.
type decimal struct {
	mant  int64
	scale int
}

var pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// integer returns the value if it is whole.
func (d decimal) integer() (int64, bool) {
	if d.scale == 0 { // the common case, without a division
		return d.mant, true
	}
	p := pow10[d.scale]
	return d.mant / p, d.mant%p == 0
}

// time converts a number of nanoseconds to Time, rounding to the nearest
// unit, exactly when it fits.
func (d decimal) time() (pixel.Time, bool) {
	const limit = 1 << 56
	if d.mant > limit || d.mant < -limit {
		return 0, false
	}
	p := pow10[d.scale]
	v := d.mant * int64(pixel.Nanosecond)
	half := p / 2
	if v < 0 {
		half = -half
	}
	return pixel.Time(divPow10(v+half, d.scale)), true
}

// divPow10 is v / 10^scale, truncated; the scales of times written to
// the 64th of a ns (up to 6 decimals) divide by constants, which compile
// to multiplications, several times faster than a division.
func divPow10(v int64, scale int) int64 {
	switch scale {
	case 0:
		return v
	case 1:
		return v / 10
	case 2:
		return v / 100
	case 3:
		return v / 1e3
	case 4:
		return v / 1e4
	case 5:
		return v / 1e5
	case 6:
		return v / 1e6
	}
	return v / pow10[scale]
}

// scanDecimals is the fast path of the text readers: it reads every field
// of line as a plain decimal number ("-12", "3.5") into out in one pass. It
// reports false for anything else (exponents, letters, too many fields or
// digits), and the caller then takes the slow path that names the problem.
// A space separator also splits at tabs and collapses runs.
func scanDecimals(line []byte, sep byte, out []decimal) (int, bool) {
	n, i := 0, 0
	for {
		for i < len(line) && blank(line[i], sep) {
			i++
		}
		if n == len(out) {
			return n, false
		}
		neg := false
		if i < len(line) && (line[i] == '-' || line[i] == '+') {
			neg = line[i] == '-'
			i++
		}
		// Digits, a point, digits: tight loops, one test a byte. More
		// than 17 digits may overflow mant, and are refused anyway.
		var mant int64
		start := i
		for i < len(line) && line[i]-'0' < 10 {
			mant = mant*10 + int64(line[i]-'0')
			i++
		}
		digits, scale := i-start, 0
		if i < len(line) && line[i] == '.' {
			i++
			start = i
			for i < len(line) && line[i]-'0' < 10 {
				mant = mant*10 + int64(line[i]-'0')
				i++
			}
			scale = i - start
			digits += scale
		}
		if digits == 0 || digits > 17 {
			return n, false
		}
		if neg {
			mant = -mant
		}
		out[n] = decimal{mant, scale}
		n++
		end := i
		for i < len(line) && blank(line[i], sep) {
			i++
		}
		switch {
		case i == len(line):
			return n, true
		case sep == ' ':
			if i == end {
				return n, false // a number runs into something else
			}
		case line[i] != sep:
			return n, false
		default:
			i++
		}
	}
}

// linearBulk parses the leading lines of text that have the common form of
// the formats with a linear pixel index (.t3pa, Katherine): fields
// unsigned decimals separated by one sep byte, fields of them, of which
// col names the index, ToA, FToA and ToT, the pixel inside the sensor,
// each line ended by "\n" or "\r\n". It reads them into dst as the line
// parsers would, stops at the first other line, and returns the bytes and
// the lines it took.
func linearBulk(text []byte, dst *pixel.Hits, s sensor, sep byte, fields int, col [4]int) (int, int64) {
	text = text[:bytes.LastIndexByte(text, '\n')+1]
	most := bytes.Count(text, []byte{'\n'})
	if most == 0 || fields > len(lineState{}.nums) {
		return 0, 0
	}
	base := dst.Len()
	dst.Reserve(most)
	xs, ys, ts, tots := dst.X[base:base+most], dst.Y[base:base+most], dst.ToA[base:base+most], dst.ToT[base:base+most]
	pixels := int64(s.width) * int64(s.height)
	var v [len(lineState{}.nums)]int64
	k, at := 0, 0 // the hits, and where the line being parsed starts
	for k < most {
		i, ok := at, true
		for f := range fields {
			if f > 0 {
				if text[i] != sep {
					ok = false
					break
				}
				i++
			}
			if v[f], i, ok = unsigned(text, i); !ok {
				break
			}
		}
		if ok && text[i] == '\r' {
			i++
		}
		idx, toa, ftoa, tot := v[col[0]], v[col[1]], v[col[2]], v[col[3]]
		if !ok || text[i] != '\n' || idx >= pixels || tot > 0xFFFF {
			break
		}
		xs[k], ys[k] = uint16(idx%int64(s.width)), uint16(idx/int64(s.width))
		ts[k], tots[k] = pixel.Time(toa*1600-ftoa*100), uint16(tot)
		k++
		at = i + 1
	}
	dst.X, dst.Y, dst.ToA, dst.ToT = dst.X[:base+k], dst.Y[:base+k], dst.ToA[:base+k], dst.ToT[:base+k]
	return at, int64(k)
}
