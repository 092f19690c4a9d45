package pixel

import (
	"math/rand/v2"
	"testing"
)

func gammaLike(n int) *Hits {
	r := rand.New(rand.NewPCG(1, 2))
	var h Hits
	t := Time(0)
	for len(h.ToA) < n {
		t += Time(r.IntN(800)) * Nanosecond
		x, y := uint16(1+r.IntN(250)), uint16(1+r.IntN(250))
		k := 1 + r.IntN(4)
		for q := 0; q < k; q++ {
			h.Append(x+uint16(q&1), y+uint16(q>>1), t, 50)
		}
	}
	return &h
}

func BenchmarkParts(b *testing.B) {
	h := gammaLike(1 << 16)
	span := h.ToA[h.Len()-1] + Millisecond
	for _, mode := range []string{"addRange", "add+emit"} {
		b.Run(mode, func(b *testing.B) {
			c, _ := NewClusterer(DefaultConfig())
			off := Time(0)
			n := 0
			for b.Loop() {
				for i := range h.ToA {
					h.ToA[i] += off
				}
				if mode == "addRange" {
					c.out.Reset()
					for from := 0; from < h.Len(); from += emitEvery {
						c.addRange(h, from, min(h.Len(), from+emitEvery))
					}
					c.emit(true)
				} else {
					c.Add(h)
				}
				for i := range h.ToA {
					h.ToA[i] -= off
				}
				off += span
				n += h.Len()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/hit")
		})
	}
}
