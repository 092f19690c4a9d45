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
	b = bytes.TrimRight(b, "\r\n")
	return b, nil
}

func (s *lineScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: line %d: %s", s.format, s.name, s.line, fmt.Sprintf(format, args...))
}

// splitFields cuts a line into at most len(dst) fields at any byte for
// which sep is true, skipping empty fields when collapse is set.
func splitFields(dst [][]byte, line []byte, sep func(byte) bool, collapse bool) [][]byte {
	dst = dst[:0]
	start := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) && !sep(line[i]) {
			continue
		}
		if f := bytes.TrimSpace(line[start:i]); len(f) > 0 || !collapse {
			dst = append(dst, f)
		}
		start = i + 1
	}
	return dst
}

func isTab(b byte) bool   { return b == '\t' }
func isComma(b byte) bool { return b == ',' }
func isSpace(b byte) bool { return b == ' ' || b == '\t' }

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

// parseFloat parses a float without copying the bytes.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
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
