package tpx3

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// maskedPixels lists the masked pixels of a mask read from text, in row
// order.
func maskedPixels(t *testing.T, text string, w, h int) [][2]int {
	t.Helper()
	m, err := ReadMask(strings.NewReader(text), "m.txt", w, h)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	for y := range h {
		for x := range w {
			if m.Has(x, y) {
				got = append(got, [2]int{x, y})
			}
		}
	}
	if len(got) != m.Pixels() {
		t.Fatalf("%d pixels counted, %d set", m.Pixels(), len(got))
	}
	return got
}

func TestReadMask(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       [][2]int
	}{
		{"list", "# hot pixels\n2 2\n\n 3\t1 # noisy\n2 2\n", [][2]int{{3, 1}, {2, 2}}},
		{"csv list with header", "x,y\r\n3,0\r\n0,2\r\n", [][2]int{{3, 0}, {0, 2}}},
		{"list of decimals", "1.0 2.00\n", [][2]int{{1, 2}}},
		{"matrix", "0 0 0 0\n0 1 0 0\n0 0 0 1\n", [][2]int{{1, 1}, {3, 2}}},
		{"list with counts", "# x y hits\n3 1 45015\n0 2 600\n", [][2]int{{3, 1}, {0, 2}}},
		{"list with counts and a 0/1 line", "3 1 45015\n1 0 1\n", [][2]int{{1, 0}, {3, 1}}},
		{"list of hitflow mask", "# hitflow mask\n3 2 # 45015 hits\n", [][2]int{{3, 2}}},
		{"matrix with CRLF and trailing spaces", "1 0 0 0 \r\n0 0 0 1 \r\n", [][2]int{{0, 0}, {3, 1}}},
		{"smaller matrix", "0 1 0\n", [][2]int{{1, 0}}},
		{"comma matrix", "0,0,0\n0,0,1\n", [][2]int{{2, 1}}},
		{"all zero", "0 0 0 0\n", nil},
		{"list of no pixels", "# nothing hot\nx y\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := maskedPixels(t, c.text, 4, 3); !slices.Equal(got, c.want) {
				t.Fatalf("masked %v, want %v", got, c.want)
			}
		})
	}
}

// TestWriteMaskReadsBack: what WriteMask writes, ReadMask reads as the
// same pixels, none included (hitflow mask finding no hot pixel).
func TestWriteMaskReadsBack(t *testing.T) {
	for _, pixels := range [][]pixel.PixelHits{nil, {{X: 3, Y: 1, Hits: 45015}, {X: 0, Y: 2, Hits: 600}}} {
		var b strings.Builder
		if err := WriteMask(&b, "hitflow mask: a test\non two lines", pixels); err != nil {
			t.Fatal(err)
		}
		var want [][2]int
		for _, p := range pixels {
			want = append(want, [2]int{int(p.X), int(p.Y)})
		}
		slices.SortFunc(want, func(a, b [2]int) int { return cmp.Or(a[1]-b[1], a[0]-b[0]) })
		if got := maskedPixels(t, b.String(), 4, 3); !slices.Equal(got, want) {
			t.Errorf("%q read back as %v, want %v", b.String(), got, want)
		}
	}
}

func TestReadMaskErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "m.txt: no pixels"},
		{"# nothing\n\n", "m.txt: no pixels"},
		{"1 2\n3\n", "m.txt: line 2: 1 value, want a pixel x y"},
		{"1 2 7\n3 4 5\n", "m.txt: line 2: pixel (3, 4) is outside the 4x3 sensor"},
		{"1 2\n\nx y\n", `m.txt: line 3: "x y" is not a pixel x y`},
		{"1 -2\n", "m.txt: line 1: pixel (1, -2) is outside the 4x3 sensor"},
		{"4 0\n", "m.txt: line 1: pixel (4, 0) is outside the 4x3 sensor"},
		{"0 0 0\n0 0\n", "m.txt: line 2: 2 values, want 3 as on the first row"},
		{"0 0 0 0 0\n", "m.txt: line 1: 5 columns, more than the sensor's 4"},
		{"0 0 0\n0 0 0\n0 0 0\n# four\n0 0 0\n", "m.txt: line 5: more than the sensor's 3 rows"},
		{"0 0 1\n0 x 0\n", `m.txt: line 2: value 2 "x": a mask matrix holds 0 (kept) and 1 (masked)`},
		{"0 0 1\n0 2 0\n", `m.txt: line 2: value 2 "2": a mask matrix holds 0 (kept) and 1 (masked)`},
		{"0 0 1\n0 0.5 0\n", `m.txt: line 2: value 2 "0.5": a mask matrix holds 0 (kept) and 1 (masked)`},
	} {
		_, err := ReadMask(strings.NewReader(c.text), "m.txt", 4, 3)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "mask: ") {
			t.Errorf("%q: error %v, want ... %s", c.text, err, c.want)
		}
	}
	if _, err := LoadMask(filepath.Join(t.TempDir(), "none.txt"), 4, 3); err == nil || !strings.Contains(err.Error(), "none.txt") {
		t.Errorf("missing file: error %v", err)
	}
	if _, err := ReadMask(strings.NewReader("1 1\n"), "m.txt", 0, 3); err == nil {
		t.Error("no sensor: no error")
	}
}

// TestLoadMaskMatrix reads a full 256 x 256 matrix written as Pixet-style
// calibration files are (CRLF, trailing spaces).
func TestLoadMaskMatrix(t *testing.T) {
	var b strings.Builder
	for y := range 256 {
		for x := range 256 {
			v := 0
			if x == y || x == 255 && y == 3 {
				v = 1
			}
			fmt.Fprintf(&b, "%d ", v)
		}
		b.WriteString("\r\n")
	}
	name := filepath.Join(t.TempDir(), "mask.txt")
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadMask(name, 1027, 256) // the row layout: the matrix covers chip 0
	if err != nil {
		t.Fatal(err)
	}
	if m.Pixels() != 257 || !m.Has(255, 3) || !m.Has(17, 17) || m.Has(17, 18) || m.Has(256, 0) {
		t.Fatalf("%d pixels", m.Pixels())
	}
}

// FuzzReadMask: any input gives a mask or an error, never a panic, and the
// pixels of a mask are on the sensor.
func FuzzReadMask(f *testing.F) {
	f.Add([]byte("# hot\n5 6\n7,1\n"))
	f.Add([]byte("x,y\r\n3,0\r\n"))
	f.Add([]byte("0 1 0\r\n1 0 0 \r\n"))
	f.Add([]byte("0 0 0 0 0\n1 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadMask(strings.NewReader(string(data)), "fuzz", 7, 5)
		if err != nil {
			if m != nil || !strings.HasPrefix(err.Error(), "mask: fuzz: ") {
				t.Fatalf("mask %v with error %v", m, err)
			}
			return
		}
		n := 0
		for y := -1; y <= 5; y++ {
			for x := -1; x <= 7; x++ {
				if m.Has(x, y) {
					n++
				}
			}
		}
		if n != m.Pixels() {
			t.Fatalf("%d pixels found, %d counted", n, m.Pixels())
		}
	})
}
