package tpx3

import (
	"bytes"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

func TestScanDecimals(t *testing.T) {
	var out [8]decimal
	for _, tc := range []struct {
		line string
		sep  byte
		want []decimal
		ok   bool
	}{
		{"1,2,3.5,4", ',', []decimal{{1, 0}, {2, 0}, {35, 1}, {4, 0}}, true},
		{" -7 , +8 ,0.015625,25.0", ',', []decimal{{-7, 0}, {8, 0}, {15625, 6}, {250, 1}}, true},
		{"257   40 2\t9 ", ' ', []decimal{{257, 0}, {40, 0}, {2, 0}, {9, 0}}, true},
		{"0\t513\t100", '\t', []decimal{{0, 0}, {513, 0}, {100, 0}}, true},
		{"1,,2", ',', nil, false},
		{"1e3,2", ',', nil, false},
		{"1,x", ',', nil, false},
		{"1.2.3", ',', nil, false},
		{"123456789012345678,1", ',', nil, false},
		{"1,2,3,4,5,6,7,8,9", ',', nil, false},
		{"", ',', nil, false},
	} {
		n, ok := scanDecimals([]byte(tc.line), tc.sep, out[:])
		if ok != tc.ok || ok && (n != len(tc.want) || string(fmtDec(out[:n])) != string(fmtDec(tc.want))) {
			t.Errorf("scanDecimals(%q) = %v %v, want %v %v", tc.line, out[:n], ok, tc.want, tc.ok)
		}
	}
}

func fmtDec(ds []decimal) []byte {
	var b []byte
	for _, d := range ds {
		b = strconv.AppendInt(b, d.mant, 10)
		b = append(b, 'e', '-')
		b = strconv.AppendInt(b, int64(d.scale), 10)
		b = append(b, ' ')
	}
	return b
}

func TestDecimalTime(t *testing.T) {
	for _, tc := range []struct {
		d    decimal
		want int64
	}{{decimal{15625, 4}, 100}, {decimal{-15625, 4}, -100}, {decimal{1, 0}, 64}, {decimal{1, 3}, 0}, {decimal{8, 3}, 1}, {decimal{-8, 3}, -1}} {
		if got, ok := tc.d.time(); !ok || int64(got) != tc.want {
			t.Errorf("%v.time() = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestScanDecimalsAsRationals: random fields of digits, points, signs,
// blanks and stray bytes; every line the fast path accepts gives each
// field's exact value (compared as rationals), and it refuses a field
// of 18 digits or more.
func TestScanDecimalsAsRationals(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const alphabet = "0123456789012345678901234567890123456789..-+ e"
	var out [8]decimal
	accepted := 0
	for range 200000 {
		var fields []string
		for range 1 + r.IntN(5) {
			f := make([]byte, r.IntN(21))
			for i := range f {
				f[i] = alphabet[r.IntN(len(alphabet))]
			}
			fields = append(fields, string(f))
		}
		line := strings.Join(fields, ",")
		n, ok := scanDecimals([]byte(line), ',', out[:])
		if !ok {
			continue
		}
		accepted++
		if n != len(fields) {
			t.Fatalf("%q: %d numbers of %d fields", line, n, len(fields))
		}
		for k, f := range fields {
			want, good := new(big.Rat).SetString(strings.TrimSpace(f))
			digits := 0
			for _, c := range f {
				if c >= '0' && c <= '9' {
					digits++
				}
			}
			got := new(big.Rat).SetFrac(big.NewInt(out[k].mant), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(out[k].scale)), nil))
			if !good || got.Cmp(want) != 0 || digits > 17 {
				t.Fatalf("%q field %d: %v, want %q", line, k, got, f)
			}
		}
	}
	if accepted < 1000 {
		t.Fatalf("only %d lines accepted", accepted)
	}
}

// randomDigits is n random decimal digits.
func randomDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// randomTexts checks count texts of up to 3,000 bytes of lines, each
// whole and from a random offset.
func randomTexts(r *rand.Rand, count int, line func() string, check func(text []byte)) {
	for range count {
		var text []byte
		for len(text) < r.IntN(3000) {
			text = append(text, line()...)
		}
		check(text)
		if skip := 1 + r.IntN(40); skip <= len(text) {
			check(text[skip:])
		}
	}
}

// TestCSVBulkTakes: csvBulk takes every line of the common form (times
// of 1 to 16 digits, CRLF, columns after tot as --hits writes) and gives
// the hits of the line parser, to the 64th of a nanosecond; lines at its
// edges it takes the same or leaves.
func TestCSVBulkTakes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 8))
	digits := func(n int) string { return randomDigits(r, n) }
	var text strings.Builder
	lines := 0
	for whole := 0; whole <= 15; whole++ {
		for s := 0; s <= 7; s++ {
			if whole+s == 0 || whole+s > 16 { // 17 digits may pass 2^56: edges below
				continue
			}
			for range 40 {
				ns := digits(whole)
				if s > 0 || r.IntN(2) == 0 {
					ns += "." + digits(s)
				}
				fmt.Fprintf(&text, "%s,%s,%s,%s%s%s", digits(1+r.IntN(4)), digits(1+r.IntN(4)), ns, digits(1+r.IntN(4)),
					[]string{"", ",17", ",x,-1.5e3"}[r.IntN(3)], []string{"\n", "\r\n"}[r.IntN(2)])
				lines++
			}
		}
	}
	in := text.String()
	want, _, err := readInParts(t, CSV, []byte(in), 1<<30, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	var got pixel.Hits
	n, taken := csvBulk([]byte(in), &got)
	if n != len(in) || taken != int64(lines) || !slices.Equal(got.ToA, want.ToA) || !slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) || !slices.Equal(got.ToT, want.ToT) {
		t.Fatalf("bulk took %d lines of %d (%d bytes of %d), or other hits than the lines' %d", taken, lines, n, len(in), want.Len())
	}
	// Edges: the digits as one integer at 2^56, 16 and more integral
	// digits, 8 decimals, quotes after tot. Taken or not, the same hits.
	for _, line := range []string{"1,2,72057594037927936,3", "1,2,72057594037927937,3", "1,2,7205759403792793.6,3",
		"1,2,7205759403792793.7,3", "1,2,720575940379279.36,3", "1,2,1125899906842624,3", "1,2,0.12345678,3",
		"1,2,1.2345678,3", "1,2,.5,3", "1,2,5.,3", "1,2,.,3", "1,2,3,4,\"5\"", "1,2,3,4,\"a\nb\"", "1,2,3,4,"} {
		data := []byte("x,y,toa_ns,tot\n" + line + "\n1,1,1,1\n")
		sameReading(t, CSV, data)
	}
}

// TestTimeOfSlowLines: a time is read exactly whether its line takes a
// fast path or, for a field no fast path takes, the slow one; the label
// reader likewise. Through a float, 18599573194910.6 ns is a 64th more.
func TestTimeOfSlowLines(t *testing.T) {
	const want = pixel.Time(1190372684474278) // 18599573194910.6 * 64, rounded
	for _, in := range []string{"x,y,toa_ns,tot,cluster\n1,2,18599573194910.6,3,4\n", "x,y,toa_ns,tot,cluster\n1,2,18599573194910.6,3,a\n",
		"x,y,toa_ns,tot,cluster\n1,2,\"18599573194910.6\",3,4\n"} {
		for _, bulk := range []bool{true, false} {
			h, _, err := readInParts(t, CSV, []byte(in), 1<<30, 1, bulk)
			if err != nil || h.Len() != 1 || h.ToA[0] != want {
				t.Errorf("%q (bulk %v): %v, %v, want one hit at %d", in, bulk, h.ToA, err, want)
			}
		}
		if l, err := ReadLabelled(strings.NewReader(in), "l.csv"); err == nil && l.Hits.ToA[0] != want {
			t.Errorf("labels of %q: %d, want %d", in, l.Hits.ToA[0], want)
		}
	}
}

// csvByLines is csvBulk's reference: csvLine, the loop over a line's
// bytes, a line after another.
func csvByLines(text []byte) (int, pixel.Hits) {
	text = text[:bytes.LastIndexByte(text, '\n')+1]
	var h pixel.Hits
	at := 0
	for at < len(text) {
		hit, next, ok := csvLine(text, at)
		if !ok {
			break
		}
		h.Append(hit.x, hit.y, hit.t, hit.tot)
		at = next
	}
	return at, h
}

// sameBulk checks that csvBulk takes the lines and gives the hits that
// csvByLines does.
func sameBulk(t testing.TB, text []byte) {
	t.Helper()
	n0, want := csvByLines(text)
	var got pixel.Hits
	got.Append(9, 9, 9, 9) // a part's hits go after those already there
	n, k := csvBulk(text, &got)
	got.X, got.Y, got.ToA, got.ToT = got.X[1:], got.Y[1:], got.ToA[1:], got.ToT[1:]
	if n != n0 || int(k) != want.Len() || !slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) ||
		!slices.Equal(got.ToA, want.ToA) || !slices.Equal(got.ToT, want.ToT) {
		t.Fatalf("%q:\nbulk took %d bytes, %d lines; line by line %d bytes, %d lines\nbulk %v %v %v %v\nlines %v %v %v %v",
			text, n, k, n0, want.Len(), got.X, got.Y, got.ToA, got.ToT, want.X, want.Y, want.ToA, want.ToT)
	}
}

// TestCSVWide: texts of random lines, most of the common form with
// fields of every length the bulk path takes and some past them (pixels
// and ToT of six digits, times of 18, nine decimals), others broken
// (a missing field, a sign, an exponent, a lone CR, a quote or a byte
// outside ASCII after tot, a line longer than the window), at every
// offset: csvBulk, which parses most of them a window of 128 bytes at a
// time, takes what the loop over the bytes takes.
func TestCSVWide(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 12))
	digits := func(n int) string { return randomDigits(r, n) }
	line := func() string {
		if r.IntN(40) == 0 {
			return []string{"1,2,3\n", "1,-2,3,4\n", "1,2,3e2,4\n", "1,2,3,4\r5\n", "1,2,3,4,\"q\"\n", "1,2,3,4,\xe9\n", "\xe9,2,3,4\n",
				"1,2,3,4," + strings.Repeat("7", 70) + "\n", "1,2,.,4\n", ",2,3,4\n", "1,2,3,\n", "12345678901234567890123456789012345678901234567890123456789012345678\n"}[r.IntN(12)]
		}
		pix := func() string { return digits([]int{1, 2, 3, 3, 3, 4, 5, 6}[r.IntN(8)]) }
		whole := []int{0, 1, 4, 8, 9, 10, 10, 10, 11, 12, 13, 14, 16, 18}[r.IntN(14)]
		ns := digits(whole)
		if whole == 0 || r.IntN(8) > 0 {
			ns += "." + digits([]int{0, 1, 2, 3, 4, 4, 5, 6, 6, 7, 8, 9}[r.IntN(12)])
		}
		end := []string{"\n", "\n", "\n", "\r\n", ",17\n", ",0,x\n", "," + strings.Repeat("5", r.IntN(90)) + "\n"}[r.IntN(7)]
		return pix() + "," + pix() + "," + ns + "," + pix() + end
	}
	randomTexts(r, 3000, line, func(text []byte) { sameBulk(t, text) })
}

// FuzzCSVBulk checks csvBulk against csvByLines on any bytes, as they
// come and repeated past the bulk path's window.
func FuzzCSVBulk(f *testing.F) {
	f.Add([]byte("1,2,3.5,4\n"))
	f.Add([]byte("255,0,1234567890.1875,1023\r\n7,77,12.015625,5,3\n"))
	f.Add([]byte("1,2,12345678901234567,3\n1,2,1234567890123.4567,4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameBulk(t, data)
		text := slices.Clone(data)
		for len(text) < 300 && len(data) > 0 {
			text = append(text, data...)
		}
		sameBulk(t, text)
	})
}

// linearByLines is linearBulk's reference: the loop over a line's bytes,
// a line after another.
func linearByLines(text []byte, f *linearFormat) (int, pixel.Hits) {
	text = text[:bytes.LastIndexByte(text, '\n')+1]
	var h pixel.Hits
	at := 0
	for at < len(text) {
		hit, next, ok := f.line(text, at)
		if !ok {
			break
		}
		h.Append(hit.x, hit.y, hit.t, hit.tot)
		at = next
	}
	return at, h
}

// sameLinearBulk checks that linearBulk takes the lines and gives the
// hits that linearByLines does.
func sameLinearBulk(t testing.TB, text []byte, f linearFormat) {
	t.Helper()
	n0, want := linearByLines(text, &f)
	var got pixel.Hits
	n, k := linearBulk(text, &got, f.s, f.sep, f.fields, f.col)
	if n != n0 || int(k) != want.Len() || !slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) ||
		!slices.Equal(got.ToA, want.ToA) || !slices.Equal(got.ToT, want.ToT) {
		t.Fatalf("%+v %q:\nbulk took %d bytes, %d lines; line by line %d bytes, %d lines", f, text, n, k, n0, want.Len())
	}
}

// linearFormats are the forms of .t3pa (tab-separated, six fields) and
// Katherine (spaces, four), on a chip and on a quad.
var linearFormats = []linearFormat{
	{sensor{256, 256}, '\t', 6, [4]int{1, 2, 4, 3}},
	{sensor{512, 512}, '\t', 6, [4]int{1, 2, 4, 3}},
	{sensor{256, 256}, ' ', 4, [4]int{0, 1, 2, 3}},
}

// TestLinearWide: texts of random lines, most of the common form with
// fields of every length from 1 to 18 digits, some broken (a field
// missing or extra, a sign, a lone CR, a byte outside ASCII, a pixel
// outside the sensor, a ToT above 16 bits, a line longer than the
// window), at two offsets: linearBulk, which parses most of them a
// window at a time, takes what the loop over the bytes takes.
func TestLinearWide(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 13))
	digits := func(n int) string { return randomDigits(r, n) }
	for _, f := range linearFormats {
		sep := string(f.sep)
		line := func() string {
			if r.IntN(40) == 0 {
				return []string{"1" + sep + "2\n", "-1" + strings.Repeat(sep+"2", f.fields-1) + "\n", strings.Repeat("1"+sep, f.fields) + "1\n",
					strings.Repeat("1"+sep, f.fields-1) + "1\r1\n", "\xe9" + strings.Repeat(sep+"2", f.fields-1) + "\n",
					strings.Repeat("9"+sep, f.fields-1) + "99999999999999999999999999999999999999999999999999999999999999999999999\n"}[r.IntN(6)]
			}
			fs := make([]string, f.fields)
			for i := range fs {
				fs[i] = digits([]int{1, 1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 17, 18}[r.IntN(13)])
			}
			fs[f.col[0]] = strconv.Itoa(r.IntN(int(f.s.width) * int(f.s.height) * 9 / 8))
			return strings.Join(fs, sep) + []string{"\n", "\n", "\r\n"}[r.IntN(3)]
		}
		randomTexts(r, 2000, line, func(text []byte) { sameLinearBulk(t, text, f) })
	}
}

// FuzzLinearBulk checks linearBulk against linearByLines on any bytes, as
// they come and repeated past the window, in every form of linearFormats.
func FuzzLinearBulk(f *testing.F) {
	f.Add([]byte("0\t1\t2\t3\t4\t0\n"))
	f.Add([]byte("7\t65535\t123456789012\t1023\t15\t0\r\n8\t70000\t1\t2\t3\t1\n"))
	f.Add([]byte("1 2 3 4\n5 6 7 8\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text := slices.Clone(data)
		for len(text) < 300 && len(data) > 0 {
			text = append(text, data...)
		}
		for _, lf := range linearFormats {
			sameLinearBulk(t, data, lf)
			sameLinearBulk(t, text, lf)
		}
	})
}
