package tpx3

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// readInParts reads every hit of data, a text format in blocks of block
// bytes cut into parts parts (block 0: the reader's own), with the
// format's bulk path or line by line only, and returns the hits, the
// counts and the error that ended the reading.
func readInParts(t *testing.T, f Format, data []byte, block, parts int, bulk bool) (pixel.Hits, Stats, error) {
	r, err := NewReader(bytes.NewReader(data), "fuzz", Options{Format: f, Width: 256, Height: 256})
	if err != nil {
		t.Fatal(err)
	}
	if tr, ok := r.(*textReader); ok {
		if block > 0 {
			tr.block = block
			tr.setParts(parts)
		}
		if !bulk {
			tr.bulk = nil
		}
	}
	var all, h pixel.Hits
	for {
		err := r.Read(&h)
		all.AppendRange(&h, 0, h.Len())
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return all, r.Stats(), err
		}
	}
}

// sameReading checks that the text readers give the same hits, errors and
// counts whether the text is parsed in one piece on one goroutine or in
// blocks of a few bytes cut into three parts, and with their bulk path
// or line by line only.
func sameReading(t *testing.T, f Format, data []byte) {
	h1, st1, err1 := readInParts(t, f, data, 1<<30, 1, true)
	for _, c := range []struct {
		block, parts int
		bulk         bool
	}{{1 + len(data)%17, 3, true}, {1 << 30, 1, false}} {
		h, st, err := readInParts(t, f, data, c.block, c.parts, c.bulk)
		if fmt.Sprint(err1) != fmt.Sprint(err) || st1 != st || !slices.Equal(hitsOf(&h1), hitsOf(&h)) {
			t.Fatalf("one piece: %d hits, %v, %+v\nin blocks of %d in %d parts, bulk %v: %d hits, %v, %+v",
				h1.Len(), err1, st1, c.block, c.parts, c.bulk, h.Len(), err, st)
		}
	}
}

// fuzzReader checks the invariants every decoder keeps on any input: no
// panic, an error or io.EOF at the end, hits counted as delivered, and
// coordinates inside the sensor for the formats that know it; and for the
// text formats, the same reading in parts as in one piece.
func fuzzReader(t *testing.T, f Format, data []byte) {
	if f != TPX3 {
		sameReading(t, f, data)
	}
	l, _ := LayoutByName("quad")
	r, err := NewReader(bytes.NewReader(data), "fuzz", Options{Format: f, Layout: l, Width: 256, Height: 256})
	if err != nil {
		t.Fatal(err)
	}
	var h pixel.Hits
	var n int64
	for range 1 << 20 {
		err := r.Read(&h)
		n += int64(h.Len())
		if f != CSV {
			for i := range h.X {
				if int(h.X[i]) >= 516 || int(h.Y[i]) >= 516 {
					t.Fatalf("hit at (%d,%d)", h.X[i], h.Y[i])
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if err2 := r.Read(&h); err2 != err || h.Len() != 0 {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
			break
		}
	}
	if st := r.Stats(); st.Hits != n {
		t.Fatalf("stats count %d hits, %d delivered", st.Hits, n)
	}
}

func FuzzRaw(f *testing.F) {
	f.Add(chunk(0, pixelWord, 0x6F<<56|5<<44|803<<9|4<<5, 0x44<<56))
	f.Add(append(chunk(1, pixelWord), chunk(3, pixelWord)...))
	f.Add([]byte("TPX3\x00\x00\x10\x00short"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, TPX3, data) })
}

// FuzzLater: bytes Later refuses stay as they were; bytes it takes keep
// their chunk headers and every packet but its 16 bits of SPIDR time,
// which advance by the periods, modulo 2^16.
func FuzzLater(f *testing.F) {
	f.Add(chunk(0, pixelWord, pixelWord|0xFFFF), uint32(1))
	f.Add(append(chunk(1, pixelWord), chunk(3, pixelWord)...), uint32(1<<16+5))
	f.Add(append(chunk(0, pixelWord), chunk(0, 0x6F<<56)...), uint32(2))
	f.Add([]byte("TPX3\x00\x00\x10\x00short"), uint32(0))
	f.Fuzz(func(t *testing.T, raw []byte, periods uint32) {
		b := bytes.Clone(raw)
		if err := Later(b, pixel.Time(periods)*ToAPeriod); err != nil {
			if !bytes.Equal(b, raw) {
				t.Fatalf("refused (%v), and changed the bytes", err)
			}
			return
		}
		for pos := 0; pos < len(raw); {
			end := pos + 8 + int(binary.LittleEndian.Uint16(raw[pos+6:]))
			if !bytes.Equal(b[pos:pos+8], raw[pos:pos+8]) {
				t.Fatalf("the chunk header at byte %d changed", pos)
			}
			for i := pos + 8; i < end; i += 8 {
				was, is := binary.LittleEndian.Uint64(raw[i:]), binary.LittleEndian.Uint64(b[i:])
				if was>>60 != 0xB || is>>16 != was>>16 || uint16(is) != uint16(was)+uint16(periods) {
					t.Fatalf("packet at byte %d: %#x became %#x, %d periods later", i, was, is, periods)
				}
			}
			pos = end
		}
	})
}

func FuzzT3PA(f *testing.F) {
	f.Add([]byte("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n0\t513\t100\t7\t3\t0\n"))
	f.Add([]byte("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\r\n1\t-5\t1\t1\t1\t0\r\n"))
	f.Add([]byte("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n1\t65535\t12345678901234567\t65535\t15\t1\r\n2\t65536\t1\t1\t1\t0\n3\t1\t1\t1\t1\t0\t9\n4\t1\t1\t1\t1"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, T3PA, data) })
}

func FuzzKatherine(f *testing.F) {
	f.Add([]byte("# c\n257 40 2 9\n258\t41\t0\t10\n"))
	f.Add([]byte("99999999999 1 1 1\n"))
	f.Add([]byte("65535 12345678901234567 15 65535\r\n65536 1 1 1\n1  1 1 1\n1 1 1 1 # c\n1 1 1 1"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, Katherine, data) })
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("x,y,toa_ns,tot\n1,2,3.5,4\n"))
	f.Add([]byte("tot,toa_ns,y,x,cluster\n1,1e300,2,3,4\n"))
	f.Add([]byte("1,2,3,4\n,,,\n"))
	// The edges of the bulk path: line ends, digits, signs, blanks.
	f.Add([]byte("x,y,toa_ns,tot\r\n65535,0,12345678901234567,65535\r\n65536,1,2,3\n1,2,123456789012345678,4\n"))
	f.Add([]byte("x,y,toa_ns,tot\n001,02,.5,00007\n1,2,3.,4\n1,2,+3,4\n1, 2,3,4\n1,2,3,4,5\n1,2,3,4\r1\n# c\n\n1,2,-0.015625,4"))
	f.Add([]byte("x,y,toa_ns,tot\n1,2,3,000004\n1,2,3,4\n1,2,3e2,4\n\"1\",2,3,4\n1,2,3,4\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, CSV, data) })
}

// FuzzLabelled checks that the label reader never panics, names the file
// in every error and keeps labels and hits of equal length.
func FuzzLabelled(f *testing.F) {
	f.Add([]byte("x,y,toa_ns,tot,cluster\n1,2,3.5,4,0\n"))
	f.Add([]byte("cluster,tot,toa_ns,y,x\n-1,1,1e300,2,3\n"))
	f.Add([]byte("x,y,toa_ns,tot,cluster\n1,2,3,4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ReadLabelled(bytes.NewReader(data), "fuzz.csv")
		if err != nil && !strings.Contains(err.Error(), "fuzz.csv") {
			t.Fatalf("error without the file name: %v", err)
		}
		if l.Hits.Len() != len(l.Labels) {
			t.Fatalf("%d hits, %d labels", l.Hits.Len(), len(l.Labels))
		}
		// In one part, and in small blocks of three parts: the same.
		one, err1 := readLabelled(bytes.NewReader(data), "fuzz.csv", 1<<30, 1)
		three, err3 := readLabelled(bytes.NewReader(data), "fuzz.csv", 1+len(data)%13, 3)
		if fmt.Sprint(err1) != fmt.Sprint(err3) || !slices.Equal(one.Labels, three.Labels) || !slices.Equal(one.Hits.ToA, three.Hits.ToA) ||
			!slices.Equal(one.Hits.X, three.Hits.X) || !slices.Equal(one.Hits.Y, three.Hits.Y) || !slices.Equal(one.Hits.ToT, three.Hits.ToT) {
			t.Fatalf("in parts: %d hits, %v; in one: %d, %v", len(three.Labels), err3, len(one.Labels), err1)
		}
	})
}

// TestBulk: text hit files of lines mostly in the common form each
// format's bulk path takes, with lines at its edges mixed in (numbers
// beyond the sensor or 16 bits, of 17 and 18 digits, with signs, blanks,
// fractions or exponents; missing and extra fields; CRLF, comments,
// blank lines, quotes; a last line without its end), read the same with
// the bulk path as line by line; also under a header that puts the
// columns in another order, which the bulk path leaves to the lines.
func TestBulk(t *testing.T) {
	for _, c := range []struct {
		f             Format
		header, other string
		line          func(r *rand.Rand, i int) string
		odd           []string
	}{
		{CSV, "x,y,toa_ns,tot\n", "tot,toa_ns,y,x\n",
			func(r *rand.Rand, _ int) string {
				return fmt.Sprintf("%d,%d,%d.%0*d,%d", r.IntN(70000), r.IntN(300), r.Int64N(1e12), r.IntN(7), r.IntN(1000), r.IntN(1100))
			},
			[]string{"65535,65535,99999999999999999,65535", "65536,1,2,3", "1,2,3,000004", "001,02,.5,00007", "1,2,3.,4",
				"1,2,+3,4", "1,2,-3.25,4", " 1,2,3,4", "1,2 ,3,4", "1,2,3,4,5", "1,2,3e2,4", "1,2,123456789012345678,4",
				"1,2,1.2345678901234567,4", "# comment", "", "\"1\",2,3,4", "1,2,3", "1.0,2,3,4", "1,2,3,4.0", "a,b,c,d", "1,2,3,4\r"}},
		{T3PA, "Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n", "Index\tToA\tMatrix Index\tToT\tFToA\tOverflow\n",
			func(r *rand.Rand, i int) string {
				return fmt.Sprintf("%d\t%d\t%d\t%d\t%d\t%d", i, r.IntN(70000), r.Int64N(1e12), r.IntN(1100), r.IntN(16), r.IntN(2))
			},
			[]string{"1\t65535\t99999999999999999\t65535\t15\t0", "1\t65536\t2\t3\t4\t0", "1\t-1\t2\t3\t4\t0", "1\t2\t3\t65536\t4\t0",
				"1\t2\t3\t4\t5\t0\t7", "1\t2\t3\t4\t5", "1\t2.0\t3\t4\t5\t0", "1\t2\t123456789012345678\t4\t5\t0", " 1\t2\t3\t4\t5\t0",
				"1\t2\t3\t4\t5\t0 ", "", "x\t2\t3\t4\t5\t0", "1\t2\t3\t4\t5\t0\r", "1\t\t3\t4\t5\t0", "+1\t2\t3\t4\t5\t0"}},
		{Katherine, "", "# no header\n",
			func(r *rand.Rand, _ int) string {
				return fmt.Sprintf("%d %d %d %d", r.IntN(70000), r.Int64N(1e12), r.IntN(16), r.IntN(1100))
			},
			[]string{"65535 99999999999999999 15 65535", "65536 1 2 3", "1  2 3 4", "1\t2 3 4", "1 2 3 4 # c", "# c", "", "1 2 3",
				"1 2 3 4 5", "-1 2 3 4", "1 2 3 65536", "1 123456789012345678 3 4", "1 2.0 3 4", "1 2 3 4\r", " 1 2 3 4"}},
	} {
		for seed := range 150 {
			r := rand.New(rand.NewPCG(uint64(seed), 39))
			var b strings.Builder
			b.WriteString(c.header)
			if seed%5 == 0 {
				b.Reset()
				b.WriteString(c.other)
			}
			for i := range 300 {
				if r.IntN(8) == 0 {
					b.WriteString(c.odd[r.IntN(len(c.odd))])
				} else {
					b.WriteString(c.line(r, i))
				}
				b.WriteString([]string{"\n", "\r\n"}[r.IntN(2)])
			}
			data := []byte(b.String())
			if seed%3 == 0 { // no end to the last line
				data = bytes.TrimRight(data, "\r\n")
			}
			sameReading(t, c.f, data)
		}
	}
}

// FuzzCalibrationMatrix: any text gives a rectangular matrix of numbers
// or an error naming the file, never a panic.
func FuzzCalibrationMatrix(f *testing.F) {
	f.Add([]byte("1 2 3\n4 5 6\n"))
	f.Add([]byte("\ufeff1.5\t2e3  -0\r\n4 NaN inf\r\n\n"))
	f.Add([]byte("1 2\n3\n"))
	f.Add([]byte("1 x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, w, h, err := parseMatrix(bytes.NewReader(data), "a.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "calib: a.txt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if w < 1 || h < 1 || len(m) != w*h {
			t.Fatalf("%d values as %dx%d", len(m), w, h)
		}
	})
}
