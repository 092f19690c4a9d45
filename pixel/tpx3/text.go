package tpx3

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/bits"
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

// bulkHit is one line's hit on a bulk path.
type bulkHit struct {
	x, y uint16
	t    pixel.Time
	tot  uint16
}

// bulkHits are the columns a bulk path writes, all of one length.
type bulkHits struct {
	x, y, tot []uint16
	t         []pixel.Time
}

// bulkLines drives a bulk path: the lines from the start of text (up to
// its last newline) go to wide, which takes runs of them a window at a
// time, and each line it leaves (near the end of text, or too long for
// the window) to line, the loop over its bytes; it stops at the first line
// that neither takes. The hits go to dst, in place, and it returns the
// bytes and the lines taken.
func bulkLines(text []byte, dst *pixel.Hits, wide func(text []byte, at int, w *digitWindow, h bulkHits) (int, int),
	line func(text []byte, at int) (bulkHit, int, bool)) (int, int64) {
	text = text[:bytes.LastIndexByte(text, '\n')+1]
	most := bytes.Count(text, []byte{'\n'})
	if most == 0 {
		return 0, 0
	}
	base := dst.Len()
	dst.Reserve(most)
	h := bulkHits{dst.X[base : base+most], dst.Y[base : base+most], dst.ToT[base : base+most], dst.ToA[base : base+most]}
	k, at := 0, 0 // the hits, and where the line being parsed starts
	w := noWindow
	for k < most {
		n, next := wide(text, at, &w, bulkHits{h.x[k:], h.y[k:], h.tot[k:], h.t[k:]})
		k, at = k+n, next
		if k == most {
			break
		}
		hit, next, ok := line(text, at)
		if !ok {
			break
		}
		h.x[k], h.y[k], h.t[k], h.tot[k] = hit.x, hit.y, hit.t, hit.tot
		k++
		at = next
	}
	dst.X, dst.Y, dst.ToA, dst.ToT = dst.X[:base+k], dst.Y[:base+k], dst.ToA[:base+k], dst.ToT[:base+k]
	return at, int64(k)
}

// digitWindow marks the bytes of text[base:base+128] that are not ASCII
// digits, those of the first 64 in lo, the others in hi (bit i for byte
// i). A new one (noWindow) is far before any text.
type digitWindow struct {
	base   int
	lo, hi uint64
}

var noWindow = digitWindow{base: math.MinInt / 2}

// mask is the mask of the non-digits of text[at:at+64] (bit i for byte
// i), for at in the window's first half: a wide path calls move first
// when at is past it.
func (w *digitWindow) mask(at int) uint64 {
	r := uint(at - w.base)
	return w.lo>>r | w.hi<<(64-r)
}

// move moves the window on by 64 bytes, or to at if that is not enough;
// false when text has less than 192 bytes from at, the room the wide
// paths take (a line of 64 bytes, words read past its fields, the
// window's second half).
func (w *digitWindow) move(text []byte, at int) bool {
	switch {
	case at+192 > len(text):
		return false
	case at-w.base < 128:
		w.base += 64
		w.lo, w.hi = w.hi, nonDigits(text[w.base+64:])
	default:
		w.base = at
		w.lo, w.hi = nonDigits(text[at:]), nonDigits(text[at+64:])
	}
	return true
}

// nonDigits is the mask of the bytes of text[:64] that are not ASCII
// digits, eight at a time: a byte less '0' is a digit when below 10,
// which adding 0x76 to its low seven bits tells in its top bit (no carry
// crosses into the next byte); the top bits are gathered by a
// multiplication.
func nonDigits(text []byte) uint64 {
	text = text[:64]
	return nonDigits8(text[0:]) | nonDigits8(text[8:])<<8 | nonDigits8(text[16:])<<16 | nonDigits8(text[24:])<<24 |
		nonDigits8(text[32:])<<32 | nonDigits8(text[40:])<<40 | nonDigits8(text[48:])<<48 | nonDigits8(text[56:])<<56
}

// nonDigits8 is nonDigits of text[:8], in the low eight bits.
func nonDigits8(text []byte) uint64 {
	x := digits8(text, 0)
	t := ((x&0x7F7F7F7F7F7F7F7F + 0x7676767676767676) | x) & 0x8080808080808080
	return (t >> 7) * 0x0102040810204080 >> 56
}

// digits8 is the eight bytes at text[i:] less '0' each, the first in the
// lowest byte.
func digits8(text []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(text[i:]) ^ 0x3030303030303030
}

// digitsValue is the value of the first n (0 to 8) digits of x, as
// digits8 gives them: shifted to the top behind zeros, then paired,
// pairs paired and so on (three multiplications).
func digitsValue(x uint64, n int) uint64 {
	// Two shifts of at most 32, which need no test of the count: one of
	// 64, for n = 0, leaves nothing.
	s := (32 - 4*uint(n)) & 63
	x = x << s << s
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	return (x*10000 + x>>32) & 0xFFFFFFFF
}

// linearBulk parses the leading lines of text that have the common form of
// the formats with a linear pixel index (.t3pa, Katherine): fields
// unsigned decimals separated by one sep byte, fields of them, of which
// col names the index, ToA, FToA and ToT, the pixel inside the sensor,
// each line ended by "\n" or "\r\n". It reads them into dst as the line
// parsers would, stops at the first other line, and returns the bytes and
// the lines it took. The lines go to a window's path (linearFormat.wide),
// those it leaves to the loop over their bytes (linearFormat.line).
func linearBulk(text []byte, dst *pixel.Hits, s sensor, sep byte, fields int, col [4]int) (int, int64) {
	if fields > len(lineState{}.nums) {
		return 0, 0
	}
	f := linearFormat{s, sep, fields, col}
	return bulkLines(text, dst, f.wide, f.line)
}

// linearFormat is the form linearBulk takes.
type linearFormat struct {
	s      sensor
	sep    byte
	fields int
	col    [4]int
}

// hit makes the hit of a line's index, ToA, FToA and ToT, false for a
// pixel outside the sensor or a ToT above 16 bits.
func (f *linearFormat) hit(idx, toa, ftoa, tot int64) (bulkHit, bool) {
	if idx >= int64(f.s.width)*int64(f.s.height) || tot > 0xFFFF {
		return bulkHit{}, false
	}
	return bulkHit{uint16(idx % int64(f.s.width)), uint16(idx / int64(f.s.width)), pixel.Time(toa*1600 - ftoa*100), uint16(tot)}, true
}

// line parses the line at text[at:], which ends in text, a field after
// another.
func (f *linearFormat) line(text []byte, at int) (bulkHit, int, bool) {
	var v [len(lineState{}.nums)]int64
	i := at
	for k := range f.fields {
		if k > 0 {
			if text[i] != f.sep {
				return bulkHit{}, 0, false
			}
			i++
		}
		var ok bool
		if v[k], i, ok = unsigned(text, i); !ok {
			return bulkHit{}, 0, false
		}
	}
	if text[i] == '\r' {
		i++
	}
	if text[i] != '\n' {
		return bulkHit{}, 0, false
	}
	h, ok := f.hit(v[f.col[0]], v[f.col[1]], v[f.col[2]], v[f.col[3]])
	return h, i + 1, ok
}

// wide parses lines from text[at:] into h while they fit in w's window
// (up to 63 bytes before the line's end, fields of up to 16 digits), and
// returns how many it took and where the next line starts: each field
// ends at the line's next non-digit, taken from the window's mask, and
// its value is computed from its bytes at once, without a branch on its
// length (a pixel index, a ToT or an FToA has as many digits as it
// happens to).
func (f *linearFormat) wide(text []byte, at int, w *digitWindow, h bulkHits) (int, int) {
	xs, ys, ts, tots := h.x, h.y[:len(h.x)], h.t[:len(h.x)], h.tot[:len(h.x)]
	var v [8]int64
	fields := f.fields
	if fields > len(v) {
		return 0, at
	}
	for k := range xs {
		if at-w.base >= 64 && !w.move(text, at) {
			return k, at
		}
		m := w.mask(at)
		p := text[at : at+128]
		start, end := 0, 0
		for i := range v[:fields] {
			end = bits.TrailingZeros64(m)
			m &= m - 1
			n := end - start
			if uint(n-1) >= 16 || i < fields-1 && p[end] != f.sep {
				return k, at
			}
			d := digitsValue(digits8(p, start), n)
			if n > 8 {
				d = digitsValue(digits8(p, start), n-8)*1e8 + digitsValue(digits8(p, end-8), 8)
			}
			v[i] = int64(d)
			start = end + 1
		}
		switch {
		case end >= 64:
			return k, at
		case p[end] == '\n':
			end++
		case p[end] == '\r' && p[end+1] == '\n':
			end += 2
		default:
			return k, at
		}
		hit, ok := f.hit(v[f.col[0]&7], v[f.col[1]&7], v[f.col[2]&7], v[f.col[3]&7])
		if !ok {
			return k, at
		}
		xs[k], ys[k], ts[k], tots[k] = hit.x, hit.y, hit.t, hit.tot
		at += end
	}
	return len(xs), at
}
