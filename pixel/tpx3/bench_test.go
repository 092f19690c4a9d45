package tpx3

import (
	"bytes"
	"io"
	"math/rand/v2"
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
