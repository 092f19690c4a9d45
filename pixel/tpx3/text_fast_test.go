package tpx3

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
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
