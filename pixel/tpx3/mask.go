package tpx3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hitflow/hitflow/internal/textscan"

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
//     named in a clustering error, with optional further columns that are
//     ignored (a hit count, say: "788 85 45015"); a first line "x,y" is a
//     header;
//   - a matrix like the calibration files: one row of 0s and 1s per y from
//     0, one column per x from 0, 1 for a masked pixel. It may be smaller
//     than the sensor (a chip's matrix on a multi-chip layout) and covers
//     the pixels from (0, 0).
//
// A first line of two values is a pixel; one of three or more values, all
// 0 or 1, starts a matrix; anything else a list. In a matrix any other
// value is an error. '#' starts a comment; values may be separated by
// spaces, tabs or commas. Errors name the file and the line.
func ReadMask(r io.Reader, name string, width, height int) (*pixel.Mask, error) {
	m, err := pixel.NewMask(width, height)
	if err != nil {
		return nil, err
	}
	sc := textscan.New(r, name, "mask")
	list, cols, row := false, 0, 0
	var fields [][]byte
	for text := range sc.Lines() {
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields = maskFields(fields[:0], text)
		if len(fields) == 0 {
			continue
		}
		if cols == 0 { // the first line with values tells the form
			cols = len(fields)
			list = cols == 2 && width != 2 || !zerosAndOnes(fields)
			if list && len(fields) >= 2 && isHeader(fields) {
				continue
			}
		}
		if list {
			if len(fields) < 2 {
				return nil, sc.Errorf("%d value, want a pixel x y", len(fields))
			}
			x, okx := textscan.ParseInt(fields[0])
			y, oky := textscan.ParseInt(fields[1])
			switch {
			case !okx || !oky:
				return nil, sc.Errorf("%q is not a pixel x y", bytes.TrimSpace(text))
			case x < 0 || y < 0 || x >= int64(width) || y >= int64(height):
				return nil, sc.Errorf("pixel (%d, %d) is outside the %dx%d sensor", x, y, width, height)
			}
			m.Set(int(x), int(y))
			continue
		}
		switch {
		case len(fields) != cols:
			return nil, sc.Errorf("%d values, want %d as on the first row", len(fields), cols)
		case cols > width:
			return nil, sc.Errorf("%d columns, more than the sensor's %d", cols, width)
		case row >= height:
			return nil, sc.Errorf("more than the sensor's %d rows", height)
		}
		for x, f := range fields {
			v, ok := textscan.ParseInt(f)
			if !ok || v != 0 && v != 1 {
				return nil, sc.Errorf("value %d %q: a mask matrix holds 0 (kept) and 1 (masked)", x+1, f)
			}
			if v == 1 {
				m.Set(x, row)
			}
		}
		row++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cols == 0 {
		return nil, fmt.Errorf("mask: %s: no pixels: want lines x y, or a matrix of 0 and 1", name)
	}
	return m, nil
}

// zerosAndOnes reports whether every value is 0 or 1, as in a matrix row.
func zerosAndOnes(fields [][]byte) bool {
	for _, f := range fields {
		if v, ok := textscan.ParseInt(f); !ok || v != 0 && v != 1 {
			return false
		}
	}
	return true
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
	_, okx := textscan.ParseInt(fields[0])
	_, oky := textscan.ParseInt(fields[1])
	return !okx && !oky
}

// WriteMask writes pixels as a mask list that [ReadMask] reads: a comment
// line per line of header, the list's header "x y" (which makes a list of
// no pixels a mask, not an empty file), then "x y # N hits" per pixel.
func WriteMask(w io.Writer, header string, pixels []pixel.PixelHits) error {
	bw := bufio.NewWriter(w)
	for line := range strings.Lines(header) {
		fmt.Fprintf(bw, "# %s", line)
		if !strings.HasSuffix(line, "\n") {
			bw.WriteByte('\n')
		}
	}
	bw.WriteString("x y\n")
	for _, p := range pixels {
		fmt.Fprintf(bw, "%d %d # %d hits\n", p.X, p.Y, p.Hits)
	}
	return bw.Flush()
}
