package textscan

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func strs(fs [][]byte) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f))
	}
	return out
}

func TestFields(t *testing.T) {
	for _, c := range []struct {
		line string
		sep  byte
		want []string
	}{
		{"a,b,,c", ',', []string{"a", "b", "", "c"}},
		{" a , b ", ',', []string{"a", "b"}},
		{`"x","y", "toa_ns" ,"tot"`, ',', []string{"x", "y", "toa_ns", "tot"}},
		{`"a,b",c`, ',', []string{"a,b", "c"}},
		{`"say ""hi""",2`, ',', []string{`say "hi"`, "2"}},
		{`"  padded  ",1`, ',', []string{"  padded  ", "1"}},
		{`"open,1`, ',', []string{`"open`, "1"}},
		{`"a"b,1`, ',', []string{`"a"b`, "1"}},
		{`"a""b"c,1`, ',', []string{`"a""b"c`, "1"}},
		{"", ',', []string{""}},
		{"a\t\tb", '\t', []string{"a", "", "b"}},
		{"Index   Matrix Index\tToA", ' ', []string{"Index", "Matrix", "Index", "ToA"}},
		{`  "q" 1  `, ' ', []string{"q", "1"}},
		{"   ", ' ', nil},
	} {
		if got := strs(Fields(nil, []byte(c.line), c.sep)); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.line, got, c.want)
		}
	}
}

// FuzzFields checks quoted fields against encoding/csv: any fields
// written by csv.Writer read back the same.
func FuzzFields(f *testing.F) {
	f.Add("a,b\x00c", byte(0))
	f.Add(`q"uote`+"\x00x,y", byte(0))
	f.Fuzz(func(t *testing.T, s string, split byte) {
		if strings.ContainsAny(s, "\r\n") {
			return
		}
		fields := strings.Split(s, string(rune(split)))
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write(fields)
		w.Flush()
		line := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		if got := strs(Fields(nil, line, ',')); !slices.Equal(got, fields) && !(len(got) == 1 && got[0] == "" && len(fields) == 1) {
			t.Fatalf("%q: %q, want %q", line, got, fields)
		}
	})
}

func TestScanner(t *testing.T) {
	s := New(strings.NewReader("\xef\xbb\xbfx,y\r\n\n# c\r\nlast"), "f.csv", "csv")
	var got []string
	for {
		l, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l))
	}
	if want := []string{"x,y", "", "# c", "last"}; !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	if s.Line() != 4 || s.Offset() != 18 {
		t.Fatalf("line %d, offset %d", s.Line(), s.Offset())
	}
	if err := s.Errorf("bad %d", 1); err.Error() != "csv: f.csv: line 4: bad 1" {
		t.Fatal(err)
	}
	// A byte-order mark is only taken off the first line.
	s = New(strings.NewReader("a\n\xef\xbb\xbfb\n"), "f", "t")
	s.Next()
	if l, _ := s.Next(); string(l) != "\xef\xbb\xbfb" {
		t.Fatalf("%q", l)
	}
	// Lines longer than the buffer are whole, up to MaxLine.
	long := strings.Repeat("1 ", MaxLine/2-1) + "\r\n"
	s = New(strings.NewReader("a\n"+long+"b"), "big.txt", "calib")
	got = nil
	for l := range s.Lines() {
		got = append(got, string(l))
	}
	if len(got) != 3 || got[1] != strings.TrimSuffix(long, "\r\n") || got[2] != "b" || s.Err() != nil || s.Offset() != int64(2+len(long)+1) {
		t.Fatalf("long line: %d lines, %v", len(got), s.Err())
	}
	s = New(strings.NewReader(strings.Repeat("x", MaxLine+1)), "big.csv", "csv")
	if _, err := s.Next(); err == nil || !strings.Contains(err.Error(), "big.csv: line 1: line longer than") {
		t.Fatalf("long line: %v", err)
	}
	// Lines stops at the end, Err nil; at a read error, Err names the line.
	s = New(strings.NewReader("a\r\nb"), "f", "t")
	got = nil
	for l := range s.Lines() {
		got = append(got, string(l))
	}
	if !slices.Equal(got, []string{"a", "b"}) || s.Err() != nil {
		t.Fatalf("Lines %q, %v", got, s.Err())
	}
	s = New(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(errors.New("disk gone"))), "f.csv", "csv")
	got = nil
	for l := range s.Lines() {
		got = append(got, string(l))
	}
	if !slices.Equal(got, []string{"a"}) || s.Err() == nil || s.Err().Error() != "csv: f.csv: line 2: disk gone" {
		t.Fatalf("Lines %q, %v", got, s.Err())
	}
	if !Skip([]byte("  # c")) || !Skip(nil) || Skip([]byte(" 1")) {
		t.Fatal("Skip")
	}
}

// FuzzParse checks the number parsers against strconv.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "-0", "25.0", "1.", ".5", "+3", "1e3", "12.5,3", "7\r", "3.5.1", "-2e-3,", "123456789012345678", "-0.0", "0x10", "inf", "", "-81.53690450071551", "9007199254740993", "0.1", "00000000000000000000.1", ".", "+", "1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := strconv.ParseFloat(s, 64)
		got, ok := ParseFloat([]byte(s))
		if ok != (err == nil) || ok && math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("ParseFloat(%q) = %v, %v; strconv %v, %v", s, got, ok, want, err)
		}
		if v, ok := ParseInt([]byte(s)); ok {
			if err != nil || float64(v) != want {
				t.Fatalf("ParseInt(%q) = %d; strconv %v, %v", s, v, want, err)
			}
		}
		// Decimal takes a plain decimal prefix, which strconv reads alone
		// to the same bits.
		if v, n, ok := Decimal([]byte(s)); ok {
			prefix, err := strconv.ParseFloat(s[:n], 64)
			if err != nil || math.Float64bits(v) != math.Float64bits(prefix) || strings.ContainsAny(s[:n], "eEinxX_") {
				t.Fatalf("Decimal(%q) = %v, %d bytes; strconv of %q: %v, %v", s, v, n, s[:n], prefix, err)
			}
			if n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] == '.' && !strings.Contains(s[:n], ".")) {
				t.Fatalf("Decimal(%q) stopped at %d, inside the decimal", s, n)
			}
		}
	})
}

// TestBlocks: the lines of blocks cut into parts are the lines Next reads,
// with the same numbers, offsets and errors, whatever the sizes.
func TestBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var text strings.Builder
		if round%3 == 0 {
			text.WriteString("\xef\xbb\xbf")
		}
		for range r.IntN(50) {
			text.WriteString(strings.Repeat("x", r.IntN(30)))
			text.WriteString([]string{"\n", "\r\n"}[r.IntN(2)])
		}
		if r.IntN(2) == 0 {
			text.WriteString("last")
		}
		type line struct {
			text      string
			num, next int64
		}
		var want []line
		seq := New(strings.NewReader(text.String()), "f", "t")
		for l := range seq.Lines() {
			want = append(want, line{string(l), seq.Line(), seq.Offset()})
		}
		head := r.IntN(3) // lines read by Next before the blocks
		sc := New(strings.NewReader(text.String()), "f", "t")
		var got []line
		for range head {
			if l, err := sc.Next(); err == nil {
				got = append(got, line{string(l), sc.Line(), sc.Offset()})
			}
		}
		size := 1 + r.IntN(100)
		for {
			blk, err := sc.Block(size)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range blk.Parts(1 + r.IntN(4)) {
				for l := range p.Lines() {
					got = append(got, line{string(l), p.Line(), p.Offset()})
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, size %d, head %d:\n%v\nwant\n%v", round, size, head, got, want)
		}
	}
	// A part's error names the line in the whole input.
	sc := New(strings.NewReader("a\nb\nc\nd\n"), "f.csv", "csv")
	blk, _ := sc.Block(1 << 10)
	parts := blk.Parts(2)
	for range parts[1].Lines() {
		break
	}
	if err := parts[1].Errorf("bad"); err.Error() != "csv: f.csv: line 4: bad" {
		t.Fatal(err)
	}
}

// TestDecimalAsStrconv: random plain decimals of 1 to 20 digits,
// the point anywhere, parse to strconv's float to the bit.
func TestDecimalAsStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fast := 0
	for range 1000000 {
		n := 1 + r.IntN(20)
		b := make([]byte, 0, n+2)
		if r.IntN(2) == 0 {
			b = append(b, '-')
		}
		at := r.IntN(n + 1)
		for i := range n {
			if i == at {
				b = append(b, '.')
			}
			b = append(b, byte('0'+r.IntN(10)))
		}
		want, err := strconv.ParseFloat(string(b), 64)
		got, ok := ParseFloat(b)
		if ok != (err == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: %v %v, strconv %v %v", b, got, ok, want, err)
		}
		if _, n, ok := Decimal(b); ok && n == len(b) {
			fast++
		}
	}
	if fast < 500000 {
		t.Errorf("only %d of 10^6 took the fast path", fast)
	}
}

// TestNegPow10: each entry is 10^-k truncated to 128 bits with the top
// bit set: H * 2^exp <= 10^-k < (H+1) * 2^exp.
func TestNegPow10(t *testing.T) {
	for k := 1; k < len(negPow10); k++ {
		p := negPow10[k]
		h := new(big.Int).Lsh(new(big.Int).SetUint64(p.hi), 64)
		h.Or(h, new(big.Int).SetUint64(p.lo))
		if h.BitLen() != 128 {
			t.Fatalf("10^-%d: %d bits", k, h.BitLen())
		}
		scale := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(-p.exp))) // 2^-exp
		want := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
		lo := new(big.Rat).Quo(new(big.Rat).SetInt(h), scale)
		hi := new(big.Rat).Quo(new(big.Rat).SetInt(new(big.Int).Add(h, big.NewInt(1))), scale)
		if lo.Cmp(want) > 0 || hi.Cmp(want) <= 0 {
			t.Fatalf("10^-%d is not within [H, H+1) * 2^%d", k, p.exp)
		}
	}
}

// TestLemireAsStrconv: decimals of 16 to 19 digits, and the hard ones,
// midpoints between two floats written out exactly, parse to strconv's
// bits (or are left to it).
func TestLemireAsStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	check := func(s string) bool {
		t.Helper()
		want, err := strconv.ParseFloat(s, 64)
		got, ok := ParseFloat([]byte(s))
		if ok != (err == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: %v %v, strconv %v %v", s, got, ok, want, err)
		}
		_, n, ok := Decimal([]byte(s))
		return ok && n == len(s)
	}
	fast := 0
	for range 1000000 {
		n := 16 + r.IntN(4)
		b := []byte{byte('1' + r.IntN(9))}
		for range n - 1 {
			b = append(b, byte('0'+r.IntN(10)))
		}
		at := 1 + r.IntN(n-1)
		s := string(b[:at]) + "." + string(b[at:])
		if check(s) {
			fast++
		}
	}
	if fast < 990000 {
		t.Errorf("only %d of 10^6 long decimals took the fast path", fast)
	}
	// Midpoints (2N+1) * 2^(E-1) with N of 53 bits: exact decimals of up
	// to 19 digits where E >= -3.
	ties := 0
	for range 200000 {
		n := uint64(1)<<52 + r.Uint64N(1<<52)
		e := -r.IntN(4)
		mid := new(big.Float).SetPrec(200).SetUint64(2*n + 1)
		mid.SetMantExp(mid, e-1)
		s := mid.Text('f', -e+1)
		if len(s) > 20 {
			continue
		}
		check(s)
		ties++
	}
	if ties < 100000 {
		t.Errorf("only %d midpoints tried", ties)
	}
	for _, s := range []string{"4503599627370496.5", "4503599627370497.5", "9007199254740993", "9007199254740993.0", "18446744073709551615", "0.0000000000000000001", "1.7976931348623157"} {
		check(s)
	}
}

// TestDecimalPrefix: Decimal reads the plain decimal a field starts with,
// whatever follows it, as ParseFloat reads the decimal alone, and says
// where it ends; it leaves to strconv what is not a plain decimal.
func TestDecimalPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fast := 0
	for range 100000 {
		num := strconv.FormatFloat(r.NormFloat64()*math.Pow(10, float64(r.IntN(12)-4)), 'f', -1, 64)
		want, _ := strconv.ParseFloat(num, 64)
		for _, after := range []string{"", ",7", "\n", "\r", "e5", " ", "x", "-1"} {
			v, n, ok := Decimal([]byte(num + after))
			if !ok {
				continue // left to strconv: 20 digits and more
			}
			fast++
			if n != len(num) || math.Float64bits(v) != math.Float64bits(want) {
				t.Fatalf("Decimal(%q) = %v, %d bytes; want %v, %d", num+after, v, n, want, len(num))
			}
		}
	}
	if fast < 400000 {
		t.Errorf("only %d of 800,000 took the fast path", fast)
	}
	for _, b := range []string{"", "-", "+", ".", "-.", "e5", "-0", "12345678901234567890", "0.12345678901234567890", ",1", " 1",
		"1234567890.1234567890", "00000000000000000000.12345678901234567890", "1.00000000000000000000000"} {
		if _, _, ok := Decimal([]byte(b)); ok {
			t.Errorf("Decimal(%q) took it", b)
		}
	}
	// Leading zeros are not among the 19 digits it takes.
	for _, b := range []string{"000000000000000000001234567890123456789", "0.000000000001234567", "-0000000000000000000000.5",
		"000000000000000000000", "00000000000000000000.00", "1234567890123456789", "123456789.0123456789"} {
		want, _ := strconv.ParseFloat(b, 64)
		if v, n, ok := Decimal([]byte(b + ",")); !ok || n != len(b) || v != want {
			t.Errorf("Decimal(%q) = %v, %d, %v; want %v", b, v, n, ok, want)
		}
	}
}
