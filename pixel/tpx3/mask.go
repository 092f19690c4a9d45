package tpx3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hitflow/hitflow/pixel"
)

// LoadMask reads a pixel mask file for a width x height sensor (see
// [ReadMask]).
func LoadMask(name string, width, height int) (*pixel.Mask, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("mask: %w", err)
	}
	defer f.Close()
	return ReadMask(f, name, width, height)
}

// ReadMask reads a pixel mask for a width x height sensor in one of two
// text forms, told apart by the first line with values:
//
//   - a list of masked pixels, one "x y" (or "x,y") per line, as the pixel
//     named in a clustering error; a first line "x,y" is a header;
//   - a matrix like the calibration files: one row of numbers per y from 0,
//     one column per x from 0, nonzero for a masked pixel. It may be
//     smaller than the sensor (a chip's matrix on a multi-chip layout) and
//     covers the pixels from (0, 0).
//
// '#' starts a comment; values may be separated by spaces, tabs or commas,
// and CRLF line ends are accepted. Errors name the file and the line.
func ReadMask(r io.Reader, name string, width, height int) (*pixel.Mask, error) {
	m, err := pixel.NewMask(width, height)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	list, cols, row, line := false, 0, 0, 0
	var fields [][]byte
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields = maskFields(fields[:0], text)
		if len(fields) == 0 {
			continue
		}
		if cols == 0 { // the first line with values tells the form
			cols = len(fields)
			list = cols == 2 && width != 2
			if list && isHeader(fields) {
				continue
			}
		}
		if list {
			if len(fields) != 2 {
				return nil, fmt.Errorf("mask: %s: line %d: %d values, want a pixel x y", name, line, len(fields))
			}
			x, okx := parseInt(fields[0])
			y, oky := parseInt(fields[1])
			switch {
			case !okx || !oky:
				return nil, fmt.Errorf("mask: %s: line %d: %q is not a pixel x y", name, line, bytes.TrimSpace(text))
			case x < 0 || y < 0 || x >= int64(width) || y >= int64(height):
				return nil, fmt.Errorf("mask: %s: line %d: pixel (%d, %d) is outside the %dx%d sensor", name, line, x, y, width, height)
			}
			m.Set(int(x), int(y))
			continue
		}
		switch {
		case len(fields) != cols:
			return nil, fmt.Errorf("mask: %s: line %d: %d values, want %d as on the first row", name, line, len(fields), cols)
		case cols > width:
			return nil, fmt.Errorf("mask: %s: line %d: %d columns, more than the sensor's %d", name, line, cols, width)
		case row >= height:
			return nil, fmt.Errorf("mask: %s: line %d: more than the sensor's %d rows", name, line, height)
		}
		for x, f := range fields {
			v, ok := parseFloat(f)
			if !ok {
				return nil, fmt.Errorf("mask: %s: line %d: value %d %q is not a number", name, line, x+1, f)
			}
			if v != 0 {
				m.Set(x, row)
			}
		}
		row++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mask: %s: line %d: %w", name, line+1, err)
	}
	if cols == 0 {
		return nil, fmt.Errorf("mask: %s: no pixels: want lines x y, or a matrix of 0 and 1", name)
	}
	return m, nil
}

// maskFields appends the values of a line, separated by spaces, tabs or
// commas, to dst.
func maskFields(dst [][]byte, line []byte) [][]byte {
	return append(dst, bytes.FieldsFunc(line, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\r'
	})...)
}

// isHeader reports whether the two values of a list's first line are
// names, not numbers.
func isHeader(fields [][]byte) bool {
	_, okx := parseInt(fields[0])
	_, oky := parseInt(fields[1])
	return !okx && !oky
}

// WriteMask writes pixels as a mask list that [ReadMask] reads: a comment
// line per line of header, then "x y # N hits" per pixel.
func WriteMask(w io.Writer, header string, pixels []pixel.PixelHits) error {
	bw := bufio.NewWriter(w)
	for line := range strings.Lines(header) {
		fmt.Fprintf(bw, "# %s", line)
		if !strings.HasSuffix(line, "\n") {
			bw.WriteByte('\n')
		}
	}
	for _, p := range pixels {
		fmt.Fprintf(bw, "%d %d # %d hits\n", p.X, p.Y, p.Hits)
	}
	return bw.Flush()
}
