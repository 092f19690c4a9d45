package textfmt

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func FuzzAppend(f *testing.F) {
	for _, v := range []uint64{0, 1, 9, 10, 99, 100, 1e15, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		f.Add(v, math.Float64frombits(v))
	}
	f.Add(uint64(0), math.Copysign(0, -1))
	f.Add(uint64(0), 1e6-1)
	f.Add(uint64(0), 1e6)
	f.Add(uint64(0), 1e21)
	f.Add(uint64(0), math.Inf(-1))
	for _, x := range []float64{0.1, 110, 999999, -1e6, 123456789, 0.5, 10.4, 1e-7, math.MaxFloat64, math.NaN(), 20.333333333333332} {
		f.Add(uint64(0), x)
	}
	f.Fuzz(func(t *testing.T, u uint64, x float64) {
		pre := []byte("a,")
		if got, want := string(AppendUint(pre, u)), string(strconv.AppendUint(pre, u, 10)); got != want {
			t.Fatalf("AppendUint(%d) = %q, want %q", u, got, want)
		}
		if got, want := string(AppendInt(pre, int64(u))), string(strconv.AppendInt(pre, int64(u), 10)); got != want {
			t.Fatalf("AppendInt(%d) = %q, want %q", int64(u), got, want)
		}
		if got, want := string(AppendFloat(pre, x)), string(strconv.AppendFloat(pre, x, 'g', -1, 64)); got != want {
			t.Fatalf("AppendFloat(%v) = %q, want %q", x, got, want)
		}
	})
}

// TestAppendFloat checks the shortest form against strconv on floats of
// every bit pattern and on decimals around the ends of the plain form.
func TestAppendFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(x float64) {
		if got, want := string(AppendFloat(nil, x)), strconv.FormatFloat(x, 'g', -1, 64); got != want {
			t.Fatalf("AppendFloat(%v) = %q, want %q", x, got, want)
		}
	}
	for range 200000 {
		check(math.Float64frombits(r.Uint64()))
		scale := math.Pow(10, float64(r.IntN(16)-8))
		check(r.NormFloat64() * scale)
		check(math.Round(r.Float64()*1e4) / 1e4 * scale)
	}
	for _, x := range []float64{1e-5, 1e-4, 0.00012, 9.99e-5, 999999.5, 1e6 + 0.5, 123456.7, 1.5, -0.001, 5e-324, math.MaxFloat64, -1e300} {
		check(x)
	}
}

// TestPutUint checks every length of number, at each power of ten and
// on either side, and random numbers of every size, against strconv.
func TestPutUint(t *testing.T) {
	check := func(v uint64) {
		var b [MaxLen]byte
		if got, want := string(b[:PutUint(b[:], v)]), strconv.FormatUint(v, 10); got != want {
			t.Fatalf("PutUint(%d) = %q, want %q", v, got, want)
		}
	}
	for v := uint64(1); v != 0 && v < math.MaxUint64/10+1; v *= 10 {
		for _, w := range []uint64{v - 1, v, v + 1, 2*v - 1, 9 * v} {
			check(w)
		}
	}
	check(math.MaxUint64)
	for v := range uint64(100000) { // every entry of the tables, alone and after others
		check(v)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		check(r.Uint64() >> r.IntN(64))
	}
}

// TestFixedFractions writes every fraction of four decimals, where the
// trailing zeros are found from the digits' bytes, against strconv.
func TestFixedFractions(t *testing.T) {
	for f := range 10000 {
		v := 12 + float64(f)/1e4
		want := strconv.FormatFloat(v, 'f', 4, 64)
		if strings.Contains(want, ".") {
			want = strings.TrimRight(strings.TrimRight(want, "0"), ".")
		}
		if got := string(AppendFixed(nil, v, 4)); got != want {
			t.Fatalf("AppendFixed(%v, 4) = %q, want %q", v, got, want)
		}
	}
}

// FuzzAppendFixed checks AppendFixed against strconv's correctly rounded
// 'f' format, within the one unit of the last place the float product
// may cost, and the trimmed form.
func FuzzAppendFixed(f *testing.F) {
	for _, v := range []float64{0, -0.00001, 12.5, 3.14159265, -7, 1e14 - 1, 1e14, 2.000000000928e+11, 0.00005, 999.99996, math.NaN(), math.Inf(1), 255.5, 1023.0001} {
		f.Add(v, uint8(4))
	}
	f.Fuzz(func(t *testing.T, v float64, d uint8) {
		dec := int(d % 9)
		got := string(AppendFixed([]byte("a,"), v, dec))[2:]
		if !(math.Abs(v)*math.Pow(10, float64(dec)) < 1e18) {
			if want := strconv.FormatFloat(v, 'g', -1, 64); got != want {
				t.Fatalf("AppendFixed(%v) = %q, want %q", v, got, want)
			}
			return
		}
		if strings.HasSuffix(got, ".") || strings.Contains(got, ".") && strings.HasSuffix(got, "0") || got == "-0" {
			t.Fatalf("AppendFixed(%v, %d) = %q: not trimmed", v, dec, got)
		}
		back, err := strconv.ParseFloat(got, 64)
		if err != nil {
			t.Fatalf("AppendFixed(%v, %d) = %q: %v", v, dec, got, err)
		}
		// Within half a unit of the last decimal, and one more for the
		// product's rounding.
		unit := math.Pow(10, -float64(dec))
		if math.Abs(back-v) > unit/2+unit*1e-3+math.Abs(v)*1e-15 {
			t.Fatalf("AppendFixed(%v, %d) = %q, off by %g", v, dec, got, back-v)
		}
		if i := strings.IndexByte(got, '.'); i >= 0 && len(got)-i-1 > dec {
			t.Fatalf("AppendFixed(%v, %d) = %q: too many decimals", v, dec, got)
		}
	})
}

func TestAppendFraction(t *testing.T) {
	for k := range 17 {
		for _, num := range []uint64{0, 1, 3, 1<<k - 1, 1 << k >> 1} {
			if num >= 1<<k && num != 0 {
				continue
			}
			got := string(AppendFraction([]byte("7"), num, k))
			want := big.NewRat(int64(7<<k+num), 1<<k).FloatString(k)
			if strings.Contains(want, ".") {
				want = strings.TrimRight(strings.TrimRight(want, "0"), ".")
			}
			if got != want {
				t.Fatalf("7 + %d/2^%d: %q, want %q", num, k, got, want)
			}
		}
	}
}

// BenchmarkAppendFloat formats coordinates of 16 to 17 significant
// digits, as CLUE's inputs and distances have, 2^20 of them: over a
// cycle of a few thousand, the branch predictor learns the branches of
// every value, and the time a float fell by a third.
func BenchmarkAppendFloat(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1<<20)
	for i := range xs {
		xs[i] = r.Float64()*400 - 200
	}
	buf := make([]byte, 0, 64)
	for i := 0; b.Loop(); i++ {
		buf = AppendFloat(buf[:0], xs[i&(len(xs)-1)])
	}
}

// fixedRef is PutFixed's specification: v times 10^decimals rounded half
// away from zero (math.Round), whole numbers as themselves, the digits
// by strconv, trailing zeros and a lone point left out, no "-0"; from
// 10^18 on strconv's shortest form.
func fixedRef(v float64, decimals int) string {
	a := math.Abs(v) * math.Pow10(decimals)
	if !(a < 1e18) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	sign := ""
	if v < 0 {
		sign = "-"
	}
	if v == math.Trunc(v) {
		if v == 0 {
			return "0"
		}
		return sign + strconv.FormatUint(uint64(math.Abs(v)), 10)
	}
	q := uint64(math.Round(a))
	if q == 0 {
		return "0"
	}
	s := strconv.FormatUint(q, 10)
	if len(s) <= decimals {
		s = strings.Repeat("0", decimals-len(s)+1) + s
	}
	s = s[:len(s)-decimals] + "." + s[len(s)-decimals:]
	return sign + strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// TestPutFixed compares PutFixed with its specification, fixedRef, on
// values of every magnitude and every number of decimals: random ones,
// whole ones, those a hair either side of a half of the last decimal,
// and those about 2^52 scaled, where the scaled value stops holding a
// fraction.
func TestPutFixed(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var b [MaxLen]byte
	check := func(v float64, dec int) {
		if got, want := string(b[:PutFixed(b[:], v, dec)]), fixedRef(v, dec); got != want {
			t.Fatalf("PutFixed(%v (bits %#x), %d) = %q, want %q", v, math.Float64bits(v), dec, got, want)
		}
	}
	for _, v := range []float64{0, math.Copysign(0, -1), 0.5, -0.5, 0.49999999999999994, -0.00004, -0.00005, 1e-300, math.NaN(), math.Inf(-1), 1e17, 1e18, -1e30} {
		for dec := range 9 {
			check(v, dec)
		}
	}
	for range 2000000 {
		dec := r.IntN(9)
		scale := math.Pow10(dec)
		sign := float64(1 - 2*r.IntN(2))
		switch r.IntN(6) {
		case 0:
			check(sign*r.Float64()*2000, dec)
		case 1:
			check(sign*float64(r.Int64N(1<<40)), dec)
		case 2: // about a half of the last decimal
			h := (float64(r.Int64N(1e9)) + 0.5) / scale
			check(sign*math.Nextafter(h, 0), dec)
			check(sign*h, dec)
			check(sign*math.Nextafter(h, 2*h), dec)
		case 3: // about 2^52 scaled
			v := math.Ldexp(1+r.Float64()/1e6-5e-7, 52) / scale
			check(sign*v, dec)
			check(sign*math.Trunc(v), dec)
		case 4:
			check(sign*math.Ldexp(r.Float64(), r.IntN(140)-70), dec)
		default:
			check(math.Float64frombits(r.Uint64()), dec)
		}
	}
}
