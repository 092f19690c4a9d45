// Package textscan is the one line scanner of hitflow's text formats (hit
// CSV, .t3pa, Katherine, label files, masks, calibrations, time walks,
// class thresholds, CLUE points, cluster CSV, J-PET events and phantoms): lines without allocation, with the line
// number and byte offset for error messages; fields split at a separator
// with CSV quoting; numbers parsed from bytes.
//
// Every reader accepts what editors and exporters make of a file: a UTF-8
// byte-order mark, CRLF line ends, double-quoted fields ("x","y" or
// "a ""b""", with separators inside), and for white-space separated
// formats any run of spaces and tabs.
package textscan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"sync"
	"unsafe"

	"github.com/hitflow/hitflow/internal/prefault"
)

// bom is the UTF-8 byte-order mark some editors put before the first line.
var bom = []byte{0xEF, 0xBB, 0xBF}

// Scanner reads text lines.
type Scanner struct {
	br     *bufio.Reader // nil for a Part
	data   []byte        // a Part's unread lines
	name   string
	format string
	line   int64     // number of the line last returned, from 1
	off    int64     // byte offset of the next line
	err    error     // the error that ended Lines
	long   []byte    // a line longer than the reader's buffer
	block  [2][]byte // Block's text, in turns, reused
	turn   int       // which of block Block fills next
	rest   []byte    // the partial line after the last block
	count  int64     // a Part's lines
	// uncounted is Block's last text while its lines are not yet in
	// line: Parts counts them part by part anyway.
	uncounted []byte
}

// New reads r, the file name, in the named format (both for messages).
func New(r io.Reader, name, format string) *Scanner {
	return NewSize(r, name, format, bufferSize)
}

// NewSize is New with a read buffer of size bytes: a large one for the
// long streams of hits, where fewer reads are a few per cent faster.
func NewSize(r io.Reader, name, format string, size int) *Scanner {
	return &Scanner{br: bufio.NewReaderSize(r, size), name: name, format: format}
}

// MaxLine is the longest line a Scanner takes.
const MaxLine = 1 << 20

// bufferSize is the reader's buffer: lines longer than it (rows of a
// calibration matrix) are put together in a slice of their own, so that
// the many small files of a fuzzer or a test do not each cost MaxLine.
const bufferSize = 64 << 10

// Next returns the next line without its line end (and the first without
// a byte-order mark); io.EOF at the end. The line is valid until the next
// call, and the caller may change its bytes.
func (s *Scanner) Next() ([]byte, error) {
	if s.br == nil {
		return s.nextInData()
	}
	b, err := s.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = append(s.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) && len(s.long) <= MaxLine {
			b, err = s.br.ReadSlice('\n')
			s.long = append(s.long, b...)
		}
		if len(s.long) > MaxLine {
			s.line++
			return nil, s.Errorf("line longer than %d bytes", MaxLine)
		}
		b = s.long
	}
	if len(b) == 0 && err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%s: %s: line %d: %w", s.format, s.name, s.line+1, err)
	}
	return s.took(b), nil
}

// took counts the line b, with its line end, as read, and returns it
// without the line end (and the first line without a byte-order mark).
func (s *Scanner) took(b []byte) []byte {
	s.line++
	s.off += int64(len(b))
	if s.line == 1 {
		b = bytes.TrimPrefix(b, bom)
	}
	// bytes.TrimRight would build its set of two bytes for every line.
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// nextInData is Next on a Part's text.
func (s *Scanner) nextInData() ([]byte, error) {
	if len(s.data) == 0 {
		return nil, io.EOF
	}
	b := s.data
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	s.data = s.data[len(b):]
	return s.took(b), nil
}

// Block reads the next lines of the input, whole, about size bytes of
// them (a longer single line whole, up to MaxLine), for parsing in Parts
// on several goroutines; io.EOF at the end. The text is valid until the
// call after next, so that the next block can be read while this one is
// parsed. Once Block is called, only Block reads the input: Next and
// Lines are for the lines before (a header).
func (s *Scanner) Block(size int) (Block, error) {
	s.countBlock()
	blk := Block{sc: s, name: s.name, format: s.format, line: s.line, off: s.off}
	buf := append(s.block[s.turn][:0], s.rest...)
	s.rest = s.rest[:0]
	for len(buf) < size {
		// Grown as it fills, so that a small input costs little: to a
		// buffer, then, for an input that fills it, to the whole size at
		// once (huge pages, where steps of doubling were fresh pages each).
		if len(buf) == cap(buf) {
			grow := size - len(buf)
			if len(buf) < bufferSize {
				grow = min(grow, bufferSize)
			}
			buf = prefault.Grow(buf, grow)
		}
		n, err := s.br.Read(buf[len(buf):min(size, cap(buf))])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return blk, fmt.Errorf("%s: %s: line %d: %w", s.format, s.name, s.line+1+int64(bytes.Count(buf, nl)), err)
		}
	}
	if len(buf) == 0 {
		return blk, io.EOF
	}
	if len(buf) >= size { // more may follow: keep the last partial line
		i := bytes.LastIndexByte(buf, '\n')
		if i < 0 { // one line longer than size: read it whole
			for i < 0 && len(buf) <= MaxLine {
				line, err := s.br.ReadSlice('\n')
				buf = append(buf, line...)
				if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
					break
				}
				if err == nil {
					i = len(buf) - 1
				}
			}
			if len(buf) > MaxLine {
				s.line++
				return blk, s.Errorf("line longer than %d bytes", MaxLine)
			}
			if i < 0 {
				i = len(buf) - 1
			}
		}
		s.rest = append(s.rest, buf[i+1:]...)
		buf = buf[:i+1]
	}
	s.block[s.turn], s.turn = buf, 1-s.turn
	blk.text, s.uncounted = buf, buf
	s.off += int64(len(buf))
	return blk, nil
}

// countBlock adds the lines of Block's last text to line, unless Parts
// did.
func (s *Scanner) countBlock() {
	if s.uncounted != nil {
		s.line += lines(s.uncounted)
		s.uncounted = nil
	}
}

// lines is the number of lines of text, a last one without its end
// included.
func lines(text []byte) int64 {
	n := int64(bytes.Count(text, nl))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		n++
	}
	return n
}

var nl = []byte{'\n'}

// Block is a run of whole lines read by [Scanner.Block].
type Block struct {
	sc           *Scanner // that read it
	text         []byte
	name, format string
	line, off    int64 // the lines and bytes before the block
}

// Parts cuts the block into at most n runs of whole lines of about the
// same size, each a Scanner whose errors name the file and the line.
func (b Block) Parts(n int) []*Scanner {
	var parts []*Scanner
	line, off := b.line, b.off
	text := b.text
	for k := n; k > 0 && len(text) > 0; k-- {
		cut := len(text)
		if k > 1 {
			if i := bytes.IndexByte(text[len(text)/k:], '\n'); i >= 0 {
				cut = len(text)/k + i + 1
			}
		}
		count := lines(text[:cut])
		parts = append(parts, &Scanner{data: text[:cut], name: b.name, format: b.format, line: line, off: off, count: count})
		line += count
		off += int64(cut)
		text = text[cut:]
	}
	// The block's lines, counted: its scanner need not count them again.
	if u := b.sc.uncounted; len(u) > 0 && len(u) == len(b.text) && &u[0] == &b.text[0] {
		b.sc.line, b.sc.uncounted = line, nil
	}
	return parts
}

// Rows receives the rows that ReadRows parses.
type Rows interface {
	// Resize makes rows [0, n), with room for at least room.
	Resize(n, room int)
	// Parse parses the lines of part p into the rows from at on and
	// returns how many it filled, with the rows before an error. It is
	// called on the parts of a block at once.
	Parse(p *Scanner, at int) (int, error)
	// Move moves rows [from, from+n) to row to, which is below from.
	Move(to, from, n int)
}

// Resize is what Rows.Resize does to a column: s with length n and room
// for at least room elements, storage for a run (see prefault.Grow).
func Resize[T any](s []T, n, room int) []T {
	return prefault.Resize(prefault.Grow(s, room-len(s)), n)
}

// ReadRows parses the rest of the input into rows, after the n rows
// already there, in blocks of about block bytes (the next one read while
// one is parsed), each cut into workers parts parsed at once. Every line
// of a block has room for a row, the rows of a part after those of the
// parts before it; lines that fill none (blank lines, comments) leave
// room that the rows after them move into. The first block makes room
// for the rows the input's size (0: unknown) promises at its bytes a
// row. After each block, done, unless nil, gets the number of rows and
// returns how many to keep (0: none, for a reader that hands on a block
// at a time). ReadRows returns the rows kept at the end, or at the first
// error in the input's order those before it, with the error.
func (s *Scanner) ReadRows(rows Rows, n, block, workers int, size int64, done func(n int) (int, error)) (int, error) {
	var (
		wg      sync.WaitGroup
		errs    = make([]error, workers)
		filled  = make([]int, workers)
		at      = make([]int, workers)
		next    Block
		nextErr error
	)
	blk, err := s.Block(block)
	for first := true; err == nil; blk, err, first = next, nextErr, false {
		ps := blk.Parts(workers)
		end := n
		for k, p := range ps {
			at[k] = end
			end += int(p.Count())
		}
		room := end
		if first && size > 0 {
			room = s.Rows(end, size)
		}
		rows.Resize(end, room)
		wg.Go(func() { next, nextErr = s.Block(block) }) // read on while this block is parsed
		for k, p := range ps {
			wg.Go(func() { filled[k], errs[k] = rows.Parse(p, at[k]) })
		}
		wg.Wait()
		for k := range ps {
			if at[k] != n {
				rows.Move(n, at[k], filled[k])
			}
			n += filled[k]
			if errs[k] != nil {
				rows.Resize(n, n)
				return n, errs[k]
			}
		}
		rows.Resize(n, n)
		if done != nil {
			kept, err := done(n)
			if err != nil {
				return kept, err
			}
			n = kept
		}
	}
	if err != io.EOF {
		return n, err
	}
	return n, nil
}

// Lines yields the lines as Next returns them, until the end or an error,
// which Err then reports:
//
//	for line := range sc.Lines() { ... }
//	if err := sc.Err(); err != nil { ... }
func (s *Scanner) Lines() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for {
			line, err := s.Next()
			if err != nil {
				if err != io.EOF {
					s.err = err
				}
				return
			}
			if !yield(line) {
				return
			}
		}
	}
}

// Rest is the unread text of a Part (nil for a Scanner of a reader), for
// a parser that takes many lines at a time; Advance then says how much of
// it it took.
func (s *Scanner) Rest() []byte { return s.data }

// Advance takes the first n bytes of Rest, which hold the given number of
// whole lines, as read.
func (s *Scanner) Advance(n int, lines int64) {
	s.data = s.data[n:]
	s.line += lines
	s.off += int64(n)
}

// Count is the number of lines of a Part, those that Skip holds included.
func (s *Scanner) Count() int64 { return s.count }

// Err is the error that ended Lines, nil at the end of the input.
func (s *Scanner) Err() error { return s.err }

// Line is the number of the line Next returned last, from 1.
func (s *Scanner) Line() int64 {
	s.countBlock()
	return s.line
}

// Offset is the byte offset of the line after it.
func (s *Scanner) Offset() int64 { return s.off }

// Rows is how many rows a file of size bytes holds, at the bytes a row
// of the rows read up to Offset, and 2 % more: for a reader that sizes
// its columns once rather than growing them again and again. Never fewer
// than read (a file may grow while it is read).
func (s *Scanner) Rows(read int, size int64) int {
	return max(read, int(float64(read)*float64(size)/float64(max(s.off, 1))*1.02))
}

// Errorf makes an error naming the format, the file and the line.
func (s *Scanner) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: line %d: %s", s.format, s.name, s.line, fmt.Sprintf(format, args...))
}

// Skip reports whether a line holds nothing: blank, or a '#' comment.
func Skip(line []byte) bool {
	t := trimBlank(line)
	return len(t) == 0 || t[0] == '#'
}

// trimBlank drops the spaces and tabs a line or field starts with: a
// loop, where bytes.TrimLeft builds its set of bytes on every call (a
// tenth of reading a CLUE CSV).
func trimBlank(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// Fields cuts a line into fields at sep, trimming white space around each
// and removing CSV double quotes; appended to dst[:0]. A space separator
// splits at any run of spaces and tabs, and drops empty fields. The quoted
// fields are unescaped in place, in line.
func Fields(dst [][]byte, line []byte, sep byte) [][]byte {
	dst = dst[:0]
	if sep == ' ' {
		for f := range bytes.FieldsFuncSeq(line, func(r rune) bool { return r == ' ' || r == '\t' }) {
			dst = append(dst, unquote(f))
		}
		return dst
	}
	for {
		rest := trimBlank(line)
		if len(rest) > 0 && rest[0] == '"' {
			// A quote that is not a whole field is kept as text.
			if end := closingQuote(rest); end > 0 {
				after := trimBlank(rest[end+1:])
				if len(after) == 0 || after[0] == sep {
					dst = append(dst, unescape(rest[:end+1]))
					if len(after) == 0 {
						return dst
					}
					line = after[1:]
					continue
				}
			}
		}
		i := bytes.IndexByte(line, sep)
		if i < 0 {
			return append(dst, bytes.TrimSpace(line))
		}
		dst = append(dst, bytes.TrimSpace(line[:i]))
		line = line[i+1:]
	}
}

// closingQuote returns the index of the quote that closes the quoted
// field b starts with, or -1.
func closingQuote(b []byte) int {
	for r := 1; r < len(b); r++ {
		if b[r] == '"' {
			if r+1 < len(b) && b[r+1] == '"' {
				r++
				continue
			}
			return r
		}
	}
	return -1
}

// unescape returns the text of a whole quoted field, its doubled quotes
// made single in place.
func unescape(q []byte) []byte {
	w := 0
	for r := 1; r < len(q)-1; r++ {
		q[1+w] = q[r]
		w++
		if q[r] == '"' {
			r++
		}
	}
	return q[1 : 1+w]
}

// unquote removes the double quotes around a white-space separated field.
func unquote(f []byte) []byte {
	if len(f) >= 2 && f[0] == '"' && closingQuote(f) == len(f)-1 {
		return unescape(f)
	}
	return f
}

// ParseInt parses a decimal integer, accepting a fraction of zeros
// ("25.0") that some exporters write.
func ParseInt(b []byte) (int64, bool) {
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		for _, c := range b[i+1:] {
			if c != '0' {
				return 0, false
			}
		}
		b = b[:i]
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg || len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// ParseFloat parses a float as strconv.ParseFloat does, without copying
// the bytes. Plain decimals, the common case, take a fast path.
func ParseFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if v, n, ok := Decimal(b); ok && n == len(b) {
		return v, true
	}
	v, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	return v, err == nil
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// Decimal parses the plain decimal that b starts with, [-+]digits[.digits]
// of at most 19 digits, at most 22 after the point, and returns it and
// its length in bytes: a parser of whole lines reads a field without
// finding its end first. Without the point the digits make an integer m;
// below 2^53, m and 10^k are exact float64s and m / 10^k, one correctly
// rounded division, is the nearest float64 to the decimal (Clinger's fast
// path, which strconv takes too); above, lemire finds it, or says it
// cannot. Either way the bits strconv gives for the decimal alone.
// Anything else (no digit, more digits, -0, what lemire cannot settle)
// is left to strconv: ok false. What follows the decimal (an exponent
// too) is the caller's to check.
func Decimal(b []byte) (v float64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	neg := b[0] == '-'
	if neg || b[0] == '+' {
		n = 1
	}
	// The digits before the point and after it. m is exact while those
	// from the first nonzero one number at most 19 (10^19 < 2^64); they
	// are counted only when all the digits are more.
	var m uint64
	start := n
	m, n = digits(b, n, m)
	whole, frac, point := n-start, 0, n < len(b) && b[n] == '.'
	if point {
		m, n = digits(b, n+1, m)
		frac = n - start - whole - 1
	}
	if whole+frac > 19 && significant(b[start:n]) > 19 || whole+frac == 0 || frac > 22 || neg && m == 0 {
		return 0, n, false
	}
	switch {
	case m < 1<<53:
		v = float64(m) / pow10[frac]
	case frac == 0:
		v = float64(m) // the conversion rounds to nearest, ties to even
	default:
		if v, ok = lemire(m, frac); !ok {
			return 0, n, false
		}
	}
	if neg {
		v = -v
	}
	return v, n, true
}

// digits appends the run of digits at b[n:] to m, and returns it and the
// index after the run.
func digits(b []byte, n int, m uint64) (uint64, int) {
	for ; n < len(b) && b[n]-'0' < 10; n++ {
		m = m*10 + uint64(b[n]-'0')
	}
	return m, n
}

// significant counts the digits of a plain decimal from its first nonzero
// one.
func significant(b []byte) int {
	lead := 0
	for _, c := range b {
		if c != '0' && c != '.' {
			break
		}
		if c == '0' {
			lead++
		}
	}
	return len(b) - lead - bytes.Count(b, []byte{'.'})
}
