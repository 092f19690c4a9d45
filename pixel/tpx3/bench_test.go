package tpx3

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// encoded returns n random hits written in format f.
func encoded(b *testing.B, f Format, n int) []byte {
	var buf bytes.Buffer
	w, err := NewHitWriter(&buf, f)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Write(randomHits(rand.New(rand.NewPCG(1, 1)), n)); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkDecode measures decoding from memory, in Mhit/s on one core.
func BenchmarkDecode(b *testing.B) {
	l, _ := LayoutByName("single")
	for _, f := range []Format{TPX3, T3PA, CSV} {
		data := encoded(b, f, 1<<21)
		b.Run(f.String(), func(b *testing.B) {
			var h pixel.Hits
			hits := 0
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(data), "bench", Options{Format: f, Layout: l, Width: 256, Height: 256})
				if err != nil {
					b.Fatal(err)
				}
				for {
					err := r.Read(&h)
					hits += h.Len()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(hits)/b.Elapsed().Seconds()/1e6, "Mhit/s")
		})
	}
}

// BenchmarkReadCSVFile measures reading a file of 10^7 random hits as CSV
// (those of BenchmarkDecode: pixels anywhere on the chip, times in steps
// of 1.5625 ns; 267 MB) from the page cache, parsed on all cores, in
// Mhit/s: issue 39's reading target, without a process's start.
func BenchmarkReadCSVFile(b *testing.B) {
	name := filepath.Join(b.TempDir(), "hits.csv")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewHitWriter(f, CSV)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	const n = 10_000_000
	for range n / 1_000_000 {
		if err := w.Write(randomHits(r, 1_000_000)); err != nil {
			b.Fatal(err)
		}
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	var h pixel.Hits
	for b.Loop() {
		in, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		rd := NewCSVReader(in, name)
		hits := 0
		for err == nil {
			err = rd.Read(&h)
			hits += h.Len()
		}
		in.Close()
		if err != io.EOF || hits != n {
			b.Fatalf("%d hits, %v", hits, err)
		}
	}
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mhit/s")
}

// BenchmarkCSVWriter measures writing hits as CSV to io.Discard, in
// batches of 64 Ki: plain (Write) and labelled with clusters of 1 to 4
// hits (WriteMembers, as --hits writes them), in Mhit/s on all cores.
func BenchmarkCSVWriter(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	h := randomHits(r, 1<<16)
	cl := &pixel.Clusters{}
	cl.Reset()
	for i := 0; i < h.Len(); {
		j := min(h.Len(), i+1+r.IntN(4))
		cl.ID = append(cl.ID, int64(cl.Len()))
		cl.Members.AppendRange(h, i, j)
		cl.Start = append(cl.Start, j)
		i = j
	}
	for _, labelled := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "labelled"}[labelled], func(b *testing.B) {
			w := NewCSVWriter(io.Discard, labelled)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if labelled {
					err = w.WriteMembers(cl)
				} else {
					err = w.Write(h)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(h.Len())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mhit/s")
		})
	}
}

// BenchmarkCSVBulk measures the bulk path of the CSV reader alone on one
// core, in ns a line, on 2 Mi lines of two kinds: "narrow", as --hits
// writes gamma-ray clusters in the middle of the chip (pixels of three
// digits, times to the 64th of a ns, a ToT of two digits), and "chip",
// as a Timepix3 file of the whole chip holds them (pixels of one to three
// digits, times in steps of the fine ToA's 1.5625 ns, so zero to four
// decimals, a ToT of one to three digits): there the fields' lengths
// change from line to line.
func BenchmarkCSVBulk(b *testing.B) {
	for _, tc := range []struct {
		name         string
		pixel, tot   func(r *rand.Rand) int
		step, stride int64
	}{
		{"narrow", func(r *rand.Rand) int { return 100 + r.IntN(156) }, func(r *rand.Rand) int { return 10 + r.IntN(90) }, 200 * int64(pixel.Nanosecond), 1},
		{"chip", func(r *rand.Rand) int { return r.IntN(256) }, func(r *rand.Rand) int { return 5 + r.IntN(150) }, 128, 100},
	} {
		r := rand.New(rand.NewPCG(1, 1))
		var text []byte
		t := int64(2e9) * int64(pixel.Nanosecond)
		for range 1 << 21 {
			t += r.Int64N(tc.step) * tc.stride
			text = fmt.Appendf(text, "%d,%d,", tc.pixel(r), tc.pixel(r))
			text = pixel.AppendNs(text, pixel.Time(t))
			text = fmt.Appendf(text, ",%d\n", tc.tot(r))
		}
		b.Run(tc.name, func(b *testing.B) {
			var h pixel.Hits
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				h.Reset()
				if n, _ := csvBulk(text, &h); n != len(text) {
					b.Fatalf("took %d bytes of %d", n, len(text))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(h.Len()), "ns/line")
		})
	}
}
