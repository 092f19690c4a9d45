package tpx3

import (
	"strconv"
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
