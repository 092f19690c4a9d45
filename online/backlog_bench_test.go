package online

import (
	"io"
	"testing"
	"time"
)

// backlogPause is the time between spills.
const backlogPause = 3 * time.Second

// BenchmarkBacklog takes a backlog of 256 MiB into a stream's memory and
// reads it all, again and again: the spills of a beam faster than the
// clustering, the input read after each. In MB/s of the backlog.
func BenchmarkBacklog(b *testing.B) {
	const backlog = 256 << 20
	s, _ := newStream(b.Context(), "bench", Options{Memory: 1 << 30})
	piece := make([]byte, 1<<20)
	out := make([]byte, 1<<20)
	b.SetBytes(backlog)
	for b.Loop() {
		for range backlog / len(piece) {
			if !s.push(piece, time.Time{}) {
				b.Fatal("the stream took no more")
			}
		}
		for got := 0; got < backlog; {
			n, err := s.Read(out)
			if err != nil && err != io.EOF {
				b.Fatal(err)
			}
			got += n
		}
		b.StopTimer()
		time.Sleep(backlogPause)
		b.StartTimer()
	}
}
