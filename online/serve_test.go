package online

import (
	"bytes"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// serve starts Serve on a loopback port; the stats come on the channel.
func serve(t *testing.T, sim pixelsim.Options, speed float64) (string, <-chan ServeStats) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan ServeStats, 1)
	go func() {
		st, err := Serve(t.Context(), l, sim, ServeOptions{Speed: speed})
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	return l.Addr().String(), done
}

// The served bytes are those of the file, at any speed.
func TestServeIsTheFile(t *testing.T) {
	sim := pixelsim.Options{Hits: 200_000, Seed: 4, RateMHz: 40, Disorder: 1000}
	raw := rawRun(t, sim)
	for _, speed := range []float64{0, 1} {
		addr, done := serve(t, sim, speed)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := io.ReadAll(c)
		took := time.Since(start)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, raw) {
			t.Fatalf("speed %v: served %d bytes, the file has %d", speed, len(got), len(raw))
		}
		st := <-done
		if st.Hits != 200_000 || st.Bytes != int64(len(raw)) || st.Connections != 1 || st.LostHits != 0 {
			t.Errorf("speed %v: stats %+v", speed, st)
		}
		// 200,000 hits at 40 Mhit/s take 5 ms of the run's time.
		if speed == 1 && took < 4*time.Millisecond {
			t.Errorf("real time: served in %v, faster than the run's 5 ms", took)
		}
	}
}

// Paced: a run of about 0.2 s takes about 0.2 s, twice as fast half
// that. (Simulated in memory first: the simulation itself is slower.)
func TestServePace(t *testing.T) {
	sim := pixelsim.Options{Hits: 100_000, Seed: 5, RateMHz: 5}
	for _, speed := range []float64{1, 2} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan ServeStats, 1)
		go func() {
			st, _ := Serve(t.Context(), l, sim, ServeOptions{Speed: speed, Repeat: 10})
			served <- st
		}()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// The clock starts at the first byte: the simulation runs before.
		first := make([]byte, 1)
		if _, err := io.ReadFull(c, first); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		n, _ := io.Copy(io.Discard, c)
		took := time.Since(start)
		c.Close()
		st := <-served
		// Ten copies of 20 ms each, every 21.2992 ms (52 periods of the
		// ToA counter, 409.6 us).
		want := time.Duration(float64(9*21299200+20_000_000) / speed)
		// Not ahead of the pace: a quarter of it allowed for the first
		// byte's own delay, which the clock here starts after (CI saw 11
		// ms of 104 on a busy machine), while a server twice too fast
		// would take half; behind it only by what the server says it was
		// late.
		if took < want*3/4 || took > want+st.Late+100*time.Millisecond {
			t.Errorf("speed %v: %d bytes in %v, want about %v (late by up to %v)", speed, n+1, took, want, st.Late)
		}
	}
}

// A client that goes away loses the chunk being sent; the next client
// gets the rest, and the counts add up.
func TestServeNextClient(t *testing.T) {
	sim := pixelsim.Options{Hits: 300_000, Seed: 6}
	raw := rawRun(t, sim)
	addr, done := serve(t, sim, 0)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 100_000)
	if _, err := io.ReadFull(c, first); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(c)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	st := <-done
	if st.Connections != 2 || st.Hits+st.LostHits != 300_000 || st.LostHits == 0 {
		t.Errorf("stats %+v: want 2 connections, hits sent and lost adding to 300000", st)
	}
	// The second client's bytes are the file's tail, from a chunk start.
	if !bytes.HasSuffix(raw, rest) || string(rest[:4]) != "TPX3" {
		t.Errorf("the second client got %d bytes, not a tail of whole chunks of the file", len(rest))
	}
}

// Repeated, the run comes again and again, each copy later by its span
// and a millisecond rounded up to the ToA counter's period; so many
// copies that the packets' 16 bits of SPIDR time wrap (every 26.8 s).
func TestServeRepeat(t *testing.T) {
	sim := pixelsim.Options{Hits: 50_000, Seed: 7, RateMHz: 0.02}
	once, err := decode(bytes.NewReader(rawRun(t, sim)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const repeat = 12
	go Serve(t.Context(), l, sim, ServeOptions{Repeat: repeat})
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	all, err := decode(c)
	if err != nil {
		t.Fatal(err)
	}
	if all.Len() != repeat*once.Len() {
		t.Fatalf("%d hits served, want %d x %d", all.Len(), repeat, once.Len())
	}
	span := slices.Max(once.ToA)
	const tick = 409_600 * pixel.Nanosecond
	period := (span + pixel.Millisecond + tick - 1) / tick * tick
	if last := pixel.Time(repeat-1)*period + span; last < 27*pixel.Second {
		t.Fatalf("the copies end at %v s, before the SPIDR time wraps", last.Ns()/1e9)
	}
	for k := range repeat {
		for i := range once.Len() {
			j := k*once.Len() + i
			if all.X[j] != once.X[i] || all.Y[j] != once.Y[i] || all.ToT[j] != once.ToT[i] || all.ToA[j] != once.ToA[i]+pixel.Time(k)*period {
				t.Fatalf("copy %d, hit %d: %d,%d at %v; want %d,%d at %v", k, i, all.X[j], all.Y[j], all.ToA[j], once.X[i], once.Y[i], once.ToA[i]+pixel.Time(k)*period)
			}
		}
	}
}
