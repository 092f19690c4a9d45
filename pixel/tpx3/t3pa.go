package tpx3

import (
	"bytes"
	"io"

	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// NewT3PAReader decodes ADVACAM .t3pa text. The header line names the
// columns (Index, Matrix Index, ToA, ToT, FToA, Overflow), in any order;
// Matrix Index is y*width + x. Columns are separated by tabs, as Pixet
// writes them, or, when the header has no tab (a file that went through an
// editor or another export), by any run of spaces and tabs.
func NewT3PAReader(r io.Reader, name string, width, height int) Reader {
	tr := newTextReader(r, name, "t3pa")
	s := sensor{width, height}
	col := map[string]int{}
	var need [4]int // matrix index, ToA, ToT, FToA
	fields := 0     // of the header: more than the columns named when names repeat
	sep := byte('\t')
	tr.ready = func() bool { return fields > 0 } // the header is the first line with text
	tr.parse = func(tr *lineState, line []byte, dst *pixel.Hits) error {
		if fields > 0 && fields <= len(tr.nums) {
			if n, ok := scanDecimals(line, sep, tr.nums[:fields]); ok && n == fields {
				idx, ok1 := tr.nums[need[0]].integer()
				toa, ok2 := tr.nums[need[1]].integer()
				tot, ok3 := tr.nums[need[2]].integer()
				ftoa, ok4 := tr.nums[need[3]].integer()
				if ok1 && ok2 && ok3 && ok4 && tot >= 0 && tot <= 0xFFFF {
					s.appendLinear(dst, &tr.stats, idx, pixel.Time(toa*1600-ftoa*100), tot)
					return nil
				}
			}
		}
		// The slow path: header, blank lines, and errors named precisely.
		if len(bytes.TrimSpace(line)) == 0 {
			tr.stats.Comments++
			return nil
		}
		if fields == 0 && bytes.IndexByte(line, '\t') < 0 {
			sep = ' '
		}
		tr.fields = textscan.Fields(tr.fields, line, sep)
		f := tr.fields
		if fields == 0 {
			if sep == ' ' {
				f = joinMatrixIndex(f)
			}
			fields = len(f)
			for i, name := range f {
				col[string(name)] = i
			}
			for k, name := range []string{"Matrix Index", "ToA", "ToT", "FToA"} {
				i, ok := col[name]
				if !ok {
					return tr.sc.Errorf("header %.80q lacks the column %q", line, name)
				}
				need[k] = i
			}
			return nil
		}
		if len(f) < fields {
			return tr.sc.Errorf("%d fields, want %d", len(f), fields)
		}
		var v [4]int64
		for k, i := range need {
			var ok bool
			if v[k], ok = textscan.ParseInt(f[i]); !ok {
				return tr.sc.Errorf("field %d %q is not an integer", i+1, f[i])
			}
		}
		if err := checkToT(tr.sc, v[2]); err != nil {
			return err
		}
		s.appendLinear(dst, &tr.stats, v[0], pixel.Time(v[1]*1600-v[3]*100), v[2])
		return nil
	}
	tr.bulk = func(text []byte, dst *pixel.Hits) (int, int64) {
		if sep != '\t' || fields != 6 || need != [4]int{1, 2, 3, 4} {
			return 0, 0
		}
		return linearBulk(text, dst, s, '\t', 6, [4]int{1, 2, 4, 3})
	}
	return tr
}

// joinMatrixIndex makes the words "Matrix" "Index" of a header split at
// spaces one column name again, in place.
func joinMatrixIndex(f [][]byte) [][]byte {
	for i := 0; i+1 < len(f); i++ {
		if string(f[i]) == "Matrix" && string(f[i+1]) == "Index" {
			f[i] = []byte("Matrix Index")
			f = append(f[:i+1], f[i+2:]...)
		}
	}
	return f
}
