package tpx3

import (
	"bytes"
	"io"

	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// NewKatherineReader decodes Katherine "Burda" text: one hit per line,
// "linear_coord toa ftoa tot" separated by white space, where linear_coord
// is y*width + x; '#' starts a comment.
func NewKatherineReader(r io.Reader, name string, width, height int) Reader {
	tr := newTextReader(r, name, "katherine")
	s := sensor{width, height}
	tr.parse = func(tr *lineState, line []byte, dst *pixel.Hits) error {
		if n, ok := scanDecimals(line, ' ', tr.nums[:4]); ok && n == 4 {
			idx, ok1 := tr.nums[0].integer()
			toa, ok2 := tr.nums[1].integer()
			ftoa, ok3 := tr.nums[2].integer()
			tot, ok4 := tr.nums[3].integer()
			if ok1 && ok2 && ok3 && ok4 && tot >= 0 && tot <= 0xFFFF {
				s.appendLinear(dst, &tr.stats, idx, pixel.Time(toa*1600-ftoa*100), tot)
				return nil
			}
		}
		// The slow path: comments, blank lines, and errors named precisely.
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		tr.fields = textscan.Fields(tr.fields, line, ' ')
		f := tr.fields
		if len(f) == 0 {
			tr.stats.Comments++
			return nil
		}
		if len(f) != 4 {
			return tr.sc.Errorf("%d fields, want 4 (coord toa ftoa tot)", len(f))
		}
		var v [4]int64
		for i := range v {
			var ok bool
			if v[i], ok = textscan.ParseInt(f[i]); !ok {
				return tr.sc.Errorf("field %d %q is not an integer", i+1, f[i])
			}
		}
		if err := checkToT(tr.sc, v[3]); err != nil {
			return err
		}
		s.appendLinear(dst, &tr.stats, v[0], pixel.Time(v[1]*1600-v[2]*100), v[3])
		return nil
	}
	tr.bulk = func(text []byte, dst *pixel.Hits) (int, int64) {
		return linearBulk(text, dst, s, ' ', 4, [4]int{0, 1, 2, 3})
	}
	return tr
}
