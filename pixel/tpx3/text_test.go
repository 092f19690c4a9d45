package tpx3

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

func readString(t *testing.T, f Format, name, s string) (pixel.Hits, Stats, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(s), name, Options{Format: f, Width: 256, Height: 256})
	if err != nil {
		t.Fatal(err)
	}
	h, err := readAll(r)
	return h, r.Stats(), err
}

type hit struct {
	x, y uint16
	ns   float64
	tot  uint16
}

func hitsOf(h *pixel.Hits) []hit {
	var out []hit
	for i := range h.ToA {
		out = append(out, hit{h.X[i], h.Y[i], h.ToA[i].Ns(), h.ToT[i]})
	}
	return out
}

func TestTextFormats(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format Format
		text   string
		want   []hit
		st     Stats
	}{
		{"t3pa", T3PA,
			"Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\r\n0\t513\t100\t7\t3\t0\r\n1\t65535\t101\t12\t30\t0\r\n",
			[]hit{{1, 2, 2500 - 3*1.5625, 7}, {255, 255, 2525 - 30*1.5625, 12}},
			Stats{Hits: 2, Lines: 3}},
		{"t3pa columns reordered, matrix index out of range", T3PA,
			"ToT\tToA\tFToA\tMatrix Index\tIndex\tOverflow\n5\t40\t1\t65536\t0\t0\n6\t40\t0\t0\t1\t0\n",
			[]hit{{0, 0, 1000, 6}},
			Stats{Hits: 1, Lines: 3, OutOfRange: 1}},
		{"t3pa separated by spaces, with a byte-order mark", T3PA,
			"\xef\xbb\xbfIndex   Matrix Index    ToA ToT FToA    Overflow\n0   513 100  7 3    0\n1\t65535 101 12  30\t0\n",
			[]hit{{1, 2, 2500 - 3*1.5625, 7}, {255, 255, 2525 - 30*1.5625, 12}},
			Stats{Hits: 2, Lines: 3}},
		{"katherine", Katherine,
			"# Start of measurement\n  257   40 2  9 \n\n# comment\n258\t41\t0\t10 # trailing\r\n",
			[]hit{{1, 1, 1000 - 2*1.5625, 9}, {2, 1, 1025, 10}},
			Stats{Hits: 2, Lines: 5, Comments: 3}},
		{"csv with header and extra columns", CSV,
			"tot,cluster,toa_ns,x,y\n7,0,12.5,3,4\n8,1,-1.5625,65535,0\n9,2,1e3,70000,1\n",
			[]hit{{3, 4, 12.5, 7}, {65535, 0, -1.5625, 8}},
			Stats{Hits: 2, Lines: 4, OutOfRange: 1}},
		{"csv with quoted header, byte-order mark and CRLF", CSV,
			"\xef\xbb\xbf\"x\",\"y\", \"toa_ns\" ,\"tot\"\r\n3,4,12.5,7\r\n\"5\",\"6\",\"1.5625\",\"8\"\r\n",
			[]hit{{3, 4, 12.5, 7}, {5, 6, 1.5625, 8}},
			Stats{Hits: 2, Lines: 3}},
		{"csv without header", CSV,
			"1,2,3.0,4\n# c\n5,6,7.015625,8.0\n",
			[]hit{{1, 2, 3, 4}, {5, 6, 7.015625, 8}},
			Stats{Hits: 2, Lines: 3, Comments: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, st, err := readString(t, tc.format, "in", tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := hitsOf(&h); !slices.Equal(got, tc.want) {
				t.Fatalf("hits %v, want %v", got, tc.want)
			}
			st.Bytes = 0
			if st != tc.st {
				t.Fatalf("stats %+v, want %+v", st, tc.st)
			}
		})
	}
}

func TestTextErrors(t *testing.T) {
	for _, tc := range []struct {
		format     Format
		text, want string
		hits       int
	}{
		{T3PA, "Index\tToA\tToT\n", "t3pa: bad.txt: line 1: header \"Index\\tToA\\tToT\" lacks the column \"Matrix Index\"", 0},
		// A long header is quoted in part: a binary file read as text
		// printed kilobytes of escapes.
		{T3PA, strings.Repeat("Index\t", 40) + "\n", "t3pa: bad.txt: line 1: header \"" + strings.Repeat("Index\\t", 13) + "In\" lacks", 0},
		{T3PA, "Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n0\t1\t2\t3\t4\t0\n1\t1\tx\t3\t4\t0\n", "t3pa: bad.txt: line 3: field 3 \"x\" is not an integer", 1},
		{T3PA, "Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n0\t1\t2\n", "t3pa: bad.txt: line 2: 3 fields, want 6", 0},
		// A header whose names repeat (two blank ones) has more fields than
		// names; a row is checked against the fields (found by fuzzing: it
		// was checked against the names and read past its end).
		{T3PA, "\tMatrix Index\t\tToT\tToA\tFToA\n\t0\t\t0\t0\n", "t3pa: bad.txt: line 2: 5 fields, want 6", 0},
		{Katherine, "1 2 3 4\n1 2 3\n", "katherine: bad.txt: line 2: 3 fields, want 4", 1},
		{Katherine, "1 2 3 70000\n", "katherine: bad.txt: line 1: ToT 70000 out of range", 0},
		{CSV, "x,y,toa_ns\n", `csv: bad.txt: line 1: header lacks the column "tot"`, 0},
		{CSV, "x,y,toa_ns,tot\n1,2,3,4\n1,2,nan,4\n", `csv: bad.txt: line 3: toa_ns "nan" is not a finite time`, 1},
		{CSV, "1,2,3,4\n1.5,2,3,4\n", `csv: bad.txt: line 2: pixel ("1.5", "2") is not a pair of integers`, 1},
		{CSV, "1,2,3,4\n1,2,3\n", "csv: bad.txt: line 2: 3 fields, want at least 4", 1},
		{CSV, "1,2,3,4.5\n", `csv: bad.txt: line 1: tot "4.5" is not an integer`, 0},
	} {
		h, _, err := readString(t, tc.format, "bad.txt", tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.format, err, tc.want)
		}
		if h.Len() != tc.hits {
			t.Errorf("%v %q: %d hits before the error, want %d", tc.format, tc.want, h.Len(), tc.hits)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name, head string
		want       Format
	}{
		{"x.bin", "TPX3\x00\x00", TPX3},
		{"x.tpx3", "", TPX3},
		{"x.t3pa", "", T3PA},
		{"x.txt", "Index\tMatrix Index\tToA", T3PA},
		{"x.csv", "1 2 3 4", CSV},
		{"x.dat", "x,y,toa_ns,tot", CSV},
		{"x.txt", "# Katherine\n", Katherine},
		{"x.txt", "1 2 3 4\n", Katherine},
	} {
		got, err := Detect(tc.name, []byte(tc.head))
		if err != nil || got != tc.want {
			t.Errorf("Detect(%q, %q) = %v, %v; want %v", tc.name, tc.head, got, err, tc.want)
		}
	}
	if _, err := Detect("x.bin", []byte("hello world")); err == nil || !strings.Contains(err.Error(), "x.bin") {
		t.Errorf("undetectable input: error %v", err)
	}
}

func writeCalib(t *testing.T, dir string, w, h int, val func(k byte, x, y int) string) {
	t.Helper()
	for _, k := range []byte("abct") {
		var sb strings.Builder
		for y := range h {
			for x := range w {
				sb.WriteString(val(k, x, y) + " ")
			}
			sb.WriteString("\r\n")
		}
		if err := os.WriteFile(filepath.Join(dir, string(k)+".txt"), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCalibration(t *testing.T) {
	dir := t.TempDir()
	// Typical constants everywhere; pixel (1,0) has a == 0 and pixel (2,0)
	// a NaN, both invalid.
	writeCalib(t, dir, 4, 3, func(k byte, x, y int) string {
		switch {
		case k == 'a' && x == 1 && y == 0:
			return "0"
		case k == 'c' && x == 2 && y == 0:
			return "NaN"
		}
		return map[byte]string{'a': "1.9", 'b': "36", 'c': "55", 't': "2.8"}[k]
	})
	cal, err := LoadCalibration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Width != 4 || cal.Height != 3 || cal.InvalidPixels != 2 {
		t.Fatalf("calibration %dx%d with %d invalid pixels", cal.Width, cal.Height, cal.InvalidPixels)
	}
	// Independent check: the energy must reproduce the ToT through the
	// surrogate function, and be the larger root.
	for _, tot := range []float64{5, 20, 60, 300} {
		e, ok := cal.Energy(3, 2, tot)
		if !ok {
			t.Fatalf("no energy for ToT %v", tot)
		}
		back := 1.9*e + 36 - 55/(e-2.8)
		if d := back - tot; d > 1e-9 || d < -1e-9 {
			t.Fatalf("ToT %v -> %v keV -> ToT %v", tot, e, back)
		}
		if e <= 2.8 {
			t.Fatalf("ToT %v gave the smaller root %v", tot, e)
		}
	}
	h := &pixel.Hits{}
	h.Append(0, 0, 0, 100)
	h.Append(1, 0, 0, 100) // a == 0
	h.Append(2, 0, 0, 100) // NaN constant
	h.Append(9, 9, 0, 100) // outside the matrix
	cal.Apply(h)
	if !h.Calibrated() || h.E[0] <= 0 || h.E[1] != 0 || h.E[2] != 0 || h.E[3] != 0 || cal.InvalidHits != 3 || cal.OutsideHits != 1 {
		t.Fatalf("energies %v, %d invalid hits, %d beyond the matrix", h.E, cal.InvalidHits, cal.OutsideHits)
	}
	// A negative discriminant: b - a*t - ToT large and negative c.
	writeCalib(t, dir, 1, 1, func(k byte, x, y int) string {
		return map[byte]string{'a': "1", 'b': "0", 'c': "-100", 't': "0"}[k]
	})
	cal, err = LoadCalibration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cal.Energy(0, 0, 1); ok {
		t.Fatal("energy despite a negative discriminant")
	}
	// Constants that put the root beyond any sensor's range (a tiny a:
	// tens of GeV in a pixel), or below zero, give no energy either.
	for _, tc := range []struct {
		a, b, c, t string
		tot        float64
	}{{"1e-9", "36", "55", "2.8", 100}, {"1", "0", "-16", "-10", 0}} {
		writeCalib(t, dir, 1, 1, func(k byte, x, y int) string {
			return map[byte]string{'a': tc.a, 'b': tc.b, 'c': tc.c, 't': tc.t}[k]
		})
		if cal, err = LoadCalibration(dir); err != nil {
			t.Fatal(err)
		}
		if e, ok := cal.Energy(0, 0, tc.tot); ok {
			t.Fatalf("a=%s t=%s ToT %v: energy %v keV", tc.a, tc.t, tc.tot, e)
		}
	}
}

func TestCalibrationErrors(t *testing.T) {
	dir := t.TempDir()
	writeCalib(t, dir, 3, 2, func(k byte, x, y int) string { return "1" })
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("1 1 1\n1 x 1\n"), 0o644)
	if _, err := LoadCalibration(dir); err == nil || !strings.Contains(err.Error(), "c.txt: line 2: value 2 \"x\" is not a number") {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("1 1 1\n1 1\n"), 0o644)
	if _, err := LoadCalibration(dir); err == nil || !strings.Contains(err.Error(), "c.txt: line 2: 2 values, want 3") {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("1 1 1\n"), 0o644)
	if _, err := LoadCalibration(dir); err == nil || !strings.Contains(err.Error(), "c.txt: 3x1 values, but a.txt has 3x2") {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("1 1 1\n1 1 1\n"), 0o644)
	os.Remove(filepath.Join(dir, "t.txt"))
	if _, err := LoadCalibration(dir); err == nil || !strings.Contains(err.Error(), "t.txt") {
		t.Fatalf("error %v", err)
	}
}
