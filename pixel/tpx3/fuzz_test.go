package tpx3

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// readInParts reads every hit of data, a text format in blocks of block
// bytes cut into parts parts (block 0: the reader's own), and returns the
// hits, the counts and the error that ended the reading.
func readInParts(t *testing.T, f Format, data []byte, block, parts int) (pixel.Hits, Stats, error) {
	r, err := NewReader(bytes.NewReader(data), "fuzz", Options{Format: f, Width: 256, Height: 256})
	if err != nil {
		t.Fatal(err)
	}
	if tr, ok := r.(*textReader); ok && block > 0 {
		tr.block = block
		tr.setParts(parts)
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
// blocks of a few bytes cut into three parts.
func sameReading(t *testing.T, f Format, data []byte) {
	h1, st1, err1 := readInParts(t, f, data, 1<<30, 1)
	h3, st3, err3 := readInParts(t, f, data, 1+len(data)%17, 3)
	if fmt.Sprint(err1) != fmt.Sprint(err3) || st1 != st3 || !slices.Equal(hitsOf(&h1), hitsOf(&h3)) {
		t.Fatalf("one piece: %d hits, %v, %+v\nin parts: %d hits, %v, %+v", h1.Len(), err1, st1, h3.Len(), err3, st3)
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

func FuzzT3PA(f *testing.F) {
	f.Add([]byte("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n0\t513\t100\t7\t3\t0\n"))
	f.Add([]byte("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\r\n1\t-5\t1\t1\t1\t0\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, T3PA, data) })
}

func FuzzKatherine(f *testing.F) {
	f.Add([]byte("# c\n257 40 2 9\n258\t41\t0\t10\n"))
	f.Add([]byte("99999999999 1 1 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, Katherine, data) })
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("x,y,toa_ns,tot\n1,2,3.5,4\n"))
	f.Add([]byte("tot,toa_ns,y,x,cluster\n1,1e300,2,3,4\n"))
	f.Add([]byte("1,2,3,4\n,,,\n"))
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
	})
}
