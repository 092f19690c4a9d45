package tpx3

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unsafe"

	"github.com/hitflow/hitflow/pixel"
)

// lineScanner reads text lines without allocating, keeping the line number
// and the byte offset for error messages.
type lineScanner struct {
	br     *bufio.Reader
	name   string
	format string
	line   int64 // number of the line last returned, from 1
	off    int64 // byte offset of the next line
}

func newLineScanner(r io.Reader, name, format string) *lineScanner {
	return &lineScanner{br: bufio.NewReaderSize(r, 1<<20), name: name, format: format}
}

// next returns the next line without its line end; io.EOF at the end.
func (s *lineScanner) next() ([]byte, error) {
	b, err := s.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, s.errorf("line longer than %d bytes", s.br.Size())
	}
	if len(b) == 0 && err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%s: %s: line %d: %w", s.format, s.name, s.line+1, err)
	}
	s.line++
	s.off += int64(len(b))
	// bytes.TrimRight would build its set of two bytes for every line.
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b, nil
}

func (s *lineScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: line %d: %s", s.format, s.name, s.line, fmt.Sprintf(format, args...))
}

// splitFields cuts a line into fields at sep (a space separator also
// splits at tabs), trimming white space around each field; with collapse,
// empty fields are dropped.
func splitFields(dst [][]byte, line []byte, sep byte, collapse bool) [][]byte {
	dst = dst[:0]
	for {
		i := bytes.IndexByte(line, sep)
		if sep == ' ' {
			if j := bytes.IndexByte(line, '\t'); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		end := i
		if i < 0 {
			end = len(line)
		}
		if f := bytes.TrimSpace(line[:end]); len(f) > 0 || !collapse {
			dst = append(dst, f)
		}
		if i < 0 {
			return dst
		}
		line = line[i+1:]
	}
}

// parseInt parses a decimal integer, accepting a fraction of zeros
// ("25.0") that some exporters write.
func parseInt(b []byte) (int64, bool) {
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		if len(bytes.Trim(b[i+1:], "0")) != 0 {
			return 0, false
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

// parseFloat parses a float without copying the bytes; integers, the
// common case, take a fast path.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if v, ok := parseInt(b); ok && len(b) < 16 {
		return float64(v), true
	}
	v, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	return v, err == nil
}

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

// textReader drives a line format: parse turns one line into a hit.
type textReader struct {
	sc     *lineScanner
	fields [][]byte
	nums   [64]decimal // fast-path fields
	stats  Stats
	err    error
	parse  func(line []byte, dst *pixel.Hits) error
}

func (r *textReader) Stats() Stats { return r.stats }

func (r *textReader) Read(dst *pixel.Hits) error {
	dst.Reset()
	if r.err != nil {
		return r.err
	}
	n0 := dst.Len()
	defer func() {
		r.stats.Hits += int64(dst.Len() - n0)
		r.stats.Lines = r.sc.line
		r.stats.Bytes = r.sc.off
	}()
	for dst.Len() < batchSize {
		line, err := r.sc.next()
		if err != nil {
			r.err = err
			return err
		}
		if err := r.parse(line, dst); err != nil {
			r.err = err
			return err
		}
	}
	return nil
}

// checkToT rejects a ToT that does not fit the 16-bit hit model.
func checkToT(sc *lineScanner, tot int64) error {
	if tot < 0 || tot > 0xFFFF {
		return sc.errorf("ToT %d out of range 0..65535", tot)
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
	return pixel.Time((v + half) / p), true
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
		var mant int64
		digits, scale, dot := 0, 0, false
		for ; i < len(line); i++ {
			c := line[i]
			if c >= '0' && c <= '9' {
				if digits == 17 {
					return n, false
				}
				mant = mant*10 + int64(c-'0')
				digits++
				if dot {
					scale++
				}
				continue
			}
			if c == '.' && !dot {
				dot = true
				continue
			}
			break
		}
		if digits == 0 {
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
