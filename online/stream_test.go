package online

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// rawRun is the .tpx3 file of a simulated run.
func rawRun(t testing.TB, opt pixelsim.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := tpx3.NewHitWriter(&buf, tpx3.TPX3)
	if err != nil {
		t.Fatal(err)
	}
	if err := pixelsim.Generate(opt, w.Write); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// chunkEnds are the offsets at which the chunks of raw end.
func chunkEnds(raw []byte) []int {
	var ends []int
	for pos := 0; pos+8 <= len(raw); {
		pos += 8 + int(binary.LittleEndian.Uint16(raw[pos+6:]))
		ends = append(ends, pos)
	}
	return ends
}

// slowReader reads at most n bytes a call, sleeping d before each.
type slowReader struct {
	r io.Reader
	n int
	d time.Duration
}

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.d)
	return s.r.Read(p[:min(len(p), s.n)])
}

// randomBytes are n bytes of the seed.
func randomBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

// readAll reads s to its end, returning the bytes and the final error
// (nil for io.EOF).
func readAll(t *testing.T, r io.Reader) ([]byte, error) {
	t.Helper()
	b, err := io.ReadAll(r)
	return b, err
}

func TestStreamInMemory(t *testing.T) {
	data := randomBytes(5<<20+123, 1)
	s := Receive(t.Context(), "test", iotest.HalfReader(bytes.NewReader(data)), Options{})
	got, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the %d sent", len(got), len(data))
	}
	st := s.Stats()
	if st.Received != int64(len(data)) || st.SpooledAll != 0 || st.Buffered != 0 {
		t.Errorf("stats %+v", st)
	}
	s.Close()
}

// A backlog read to its end leaves its blocks for the next one: the
// second backlog is held in the first's memory, no block made anew, and
// the bytes come back as sent.
func TestStreamReusesBlocks(t *testing.T) {
	s, _ := newStream(t.Context(), "test", Options{Memory: 64 << 20})
	blocks := func() map[*byte]bool {
		m := map[*byte]bool{}
		for _, q := range s.parts {
			if q.lo < q.hi {
				m[&q.buf[0]] = true
			}
		}
		return m
	}
	var first map[*byte]bool
	for seed := range byte(3) {
		data := randomBytes(40<<20, seed) // ten blocks of 4 MiB
		for p := data; len(p) > 0; p = p[min(len(p), 1<<20):] {
			if !s.push(p[:min(len(p), 1<<20)], time.Now()) {
				t.Fatal("the stream took no more")
			}
		}
		held := blocks()
		if len(held) != 10 {
			t.Fatalf("backlog %d: %d blocks, want 10", seed, len(held))
		}
		if first == nil {
			first = held
		} else if !maps.Equal(held, first) {
			t.Fatalf("backlog %d: held in other blocks than the first", seed)
		}
		got := make([]byte, 0, len(data))
		for len(got) < len(data) {
			n, err := s.Read(got[len(got):cap(got)])
			if err != nil {
				t.Fatal(err)
			}
			got = got[:len(got)+n]
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("backlog %d: other bytes read than pushed", seed)
		}
	}
	s.Close()
	if len(s.spare) != 0 {
		t.Errorf("%d blocks kept after Close", len(s.spare))
	}
}

// A reader slower than the source: with a spool, the bytes beyond the
// memory go to files and come back in order; the files are removed.
func TestStreamSpool(t *testing.T) {
	data := randomBytes(3<<20, 3)
	dir := t.TempDir()
	s := Receive(t.Context(), "test", bytes.NewReader(data), Options{Memory: 64 << 10, Spool: dir})
	// Reading starts once the source is done: everything beyond the
	// memory was spooled.
	<-s.done
	st := s.Stats()
	if st.SpooledAll < int64(len(data))-64<<10 || st.Waited != 0 {
		t.Errorf("before reading: %+v; want all but 64 KiB spooled, no waiting", st)
	}
	if files, _ := os.ReadDir(dir); len(files) == 0 {
		t.Error("no spool file")
	}
	got, err := readAll(t, slowReader{s, 100 << 10, 0})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes back, not the %d sent", len(got), len(data))
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("spool files left: %v", files)
	}
	if st := s.Stats(); st.Spooled != 0 || st.Buffered != 0 {
		t.Errorf("after reading: %+v", st)
	}
}

// Memory and spool taking turns while the reader keeps up in part: the
// order is kept across the switches.
func TestStreamSpoolInterleaved(t *testing.T) {
	data := randomBytes(4<<20, 5)
	dir := t.TempDir()
	src := slowReader{bytes.NewReader(data), 48 << 10, 100 * time.Microsecond}
	s := Receive(t.Context(), "test", src, Options{Memory: 128 << 10, Spool: dir})
	got, err := readAll(t, slowReader{s, 40 << 10, 150 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("bytes differ")
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("spool files left: %v", files)
	}
}

// Without a spool the source waits, and nothing is lost.
func TestStreamBackPressure(t *testing.T) {
	data := randomBytes(2<<20, 7)
	s := Receive(t.Context(), "test", bytes.NewReader(data), Options{Memory: 64 << 10})
	got, err := readAll(t, slowReader{s, 32 << 10, time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("bytes differ")
	}
	if st := s.Stats(); st.Waited <= 0 || st.SpooledAll != 0 {
		t.Errorf("stats %+v: want waiting, no spool", st)
	}
}

// A spool that cannot be written: the source waits instead, nothing is
// lost, and the stats say why.
func TestStreamSpoolFails(t *testing.T) {
	data := randomBytes(1<<20, 9)
	s := Receive(t.Context(), "test", bytes.NewReader(data), Options{Memory: 64 << 10, Spool: filepath.Join(t.TempDir(), "missing")})
	got, err := readAll(t, slowReader{s, 32 << 10, 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("bytes differ")
	}
	if st := s.Stats(); st.SpoolErr == nil || st.Waited <= 0 {
		t.Errorf("stats %+v: want the spool's error and waiting", st)
	}
}

// The arrival times and the lag follow the bytes.
func TestStreamArrival(t *testing.T) {
	pr, pw := io.Pipe()
	s := Receive(t.Context(), "pipe", pr, Options{})
	defer s.Close()
	before := time.Now()
	pw.Write(make([]byte, 100))
	waitFor(t, func() bool { return s.Buffered() == 100 })
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	pw.Write(make([]byte, 50))
	waitFor(t, func() bool { return s.Buffered() == 150 })
	if a := s.ArrivedAt(0); a.Before(before) || a.After(mid) {
		t.Errorf("byte 0 arrived at %v, outside [%v, %v]", a, before, mid)
	}
	if lag := s.Lag(); lag < 20*time.Millisecond {
		t.Errorf("lag %v with the first bytes 20 ms old", lag)
	}
	if a := s.ArrivedAt(120); !a.After(mid) {
		t.Errorf("byte 120 arrived at %v, before %v", a, mid)
	}
	io.ReadFull(s, make([]byte, 150))
	if lag := s.Lag(); lag != 0 {
		t.Errorf("lag %v with everything read", lag)
	}
	pw.Close()
	if n, err := s.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after the end: %d, %v", n, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// listen starts a loopback listener whose connections serve runs
// handled by handle, one after the other; it returns the address.
func listen(t *testing.T, handle ...func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for _, h := range handle {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h(c)
		}
	}()
	return l.Addr().String()
}

// reconnected serves the handlers, a connection each, to a stream that
// connects again, and returns it with all it received.
func reconnected(t *testing.T, handle ...func(net.Conn)) (*Stream, []byte) {
	t.Helper()
	s, err := Dial(t.Context(), listen(t, handle...), Options{Reconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	got, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	return s, got
}

// decode decodes raw .tpx3 bytes from r, returning the hits and the error
// of the end (nil at a clean one).
func decode(r io.Reader) (*pixel.Hits, error) {
	layout, _ := tpx3.LayoutByName("single")
	d := tpx3.NewRawReader(r, "stream", layout)
	var all, batch pixel.Hits
	for {
		err := d.Read(&batch)
		for i := range batch.Len() {
			all.Append(batch.X[i], batch.Y[i], batch.ToA[i], batch.ToT[i])
		}
		if err == io.EOF {
			return &all, nil
		}
		if err != nil {
			return &all, err
		}
	}
}

// A connection lost inside a chunk, by the server closing it or by a
// reset: the whole packets before are decoded, then the error names the
// byte, or the stream and the reset.
func TestDialLost(t *testing.T) {
	raw := rawRun(t, pixelsim.Options{Hits: 30000, Seed: 1})
	ends := chunkEnds(raw)
	for _, tc := range []struct {
		name string
		cut  int  // bytes sent
		rst  bool // closed with a reset
		want func(err error, addr string) bool
	}{
		{"closed", ends[1] + 100, false, func(err error, _ string) bool {
			// The byte after the last whole packet.
			return err != nil && strings.Contains(err.Error(), fmt.Sprintf("byte %d: chunk truncated", ends[1]+8+88))
		}},
		{"reset", ends[0] + 40, true, func(err error, addr string) bool {
			return err != nil && strings.Contains(err.Error(), "tcp://"+addr) && errors.Is(err, syscall.ECONNRESET)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := listen(t, func(c net.Conn) {
				c.Write(raw[:tc.cut])
				if tc.rst {
					time.Sleep(50 * time.Millisecond)
					c.(*net.TCPConn).SetLinger(0)
				}
				c.Close()
			})
			s, err := Dial(t.Context(), addr, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			hits, err := decode(s)
			if !tc.want(err, addr) {
				t.Fatalf("error %v", err)
			}
			// The whole packets of the cut chunk are decoded too.
			start := 0
			for _, e := range ends {
				if e <= tc.cut {
					start = e
				}
			}
			if want := (start-8*(start/65536))/8 + (tc.cut-start-8)/8; hits.Len() != want {
				t.Errorf("%d hits decoded, want the %d before the cut", hits.Len(), want)
			}
		})
	}
}

// With reconnection, a chunk cut by a lost connection is dropped and
// counted, and the next connection's chunks follow.
func TestDialReconnects(t *testing.T) {
	raw := rawRun(t, pixelsim.Options{Hits: 30000, Seed: 1})
	ends := chunkEnds(raw)
	s, got := reconnected(t,
		func(c net.Conn) { c.Write(raw[:ends[0]+100]); c.Close() }, // lost inside chunk 2
		func(c net.Conn) { // chunk 2 whole, then a reset inside chunk 3
			c.Write(raw[ends[0] : ends[2]-50])
			time.Sleep(20 * time.Millisecond)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		},
		func(c net.Conn) { c.Write(raw[ends[2]:]); c.Close() }, // the rest, whole
	)
	third := ends[2] - ends[1]
	want := append(append([]byte{}, raw[:ends[1]]...), raw[ends[2]:]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d: all but the third chunk", len(got), len(want))
	}
	st := s.Stats()
	if st.Reconnects != 2 || st.Cut != int64(100+third-50) {
		t.Errorf("reconnects %d, cut %d bytes; want 2 and %d", st.Reconnects, st.Cut, 100+third-50)
	}
}

// Following a file written in pieces that split chunks: the bytes come
// whole, and the stream ends once the file stops growing.
func TestFollow(t *testing.T) {
	raw := rawRun(t, pixelsim.Options{Hits: 50000, Seed: 2})
	name := filepath.Join(t.TempDir(), "run.tpx3")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(raw[:1000])
	s, err := Follow(t.Context(), name, 300*time.Millisecond, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go func() {
		for pos, step := 1000, 7777; pos < len(raw); pos += step {
			time.Sleep(5 * time.Millisecond)
			f.Write(raw[pos:min(pos+step, len(raw))])
		}
	}()
	start := time.Now()
	got, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, raw) {
		t.Fatalf("got %d bytes, want %d", len(got), len(raw))
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("ended after %v, before the idle time", d)
	}
}

// Stopping a stream mid-run: what was received is read, then io.EOF; the
// chunk being received is cut.
func TestStop(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan ServeStats, 1)
	go func() {
		st, _ := Serve(ctx, l, pixelsim.Options{Hits: 100_000_000, RateMHz: 20, Seed: 3}, ServeOptions{Speed: 1})
		served <- st
	}()
	s, err := Dial(t.Context(), l.Addr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitFor(t, func() bool { return s.Stats().Received > 1<<20 })
	s.Stop()
	hits, err := decode(s)
	if err != nil {
		t.Fatal(err)
	}
	received := s.Stats().Received
	if hits.Len() == 0 || int64(hits.Len()) > received/8 {
		t.Errorf("%d hits from %d bytes", hits.Len(), received)
	}
	cancel()
	if st := <-served; st.Hits < int64(hits.Len()) {
		t.Errorf("served %d hits, decoded %d", st.Hits, hits.Len())
	}
}

// A connection that joins a readout mid-stream begins inside a chunk:
// the bytes before the first chunk header are skipped and counted, on
// every connection; a header look-alike inside a packet is not taken
// for one.
func TestDialJoinsMidStream(t *testing.T) {
	raw := rawRun(t, pixelsim.Options{Hits: 50000, Seed: 4})
	ends := chunkEnds(raw)
	// A packet that reads "TPX3" with a size of whole packets, whose
	// "next header" is none: not a header.
	fake := append([]byte("TPX3\x00\x00\x10\x00"), make([]byte, 40)...)
	first := append(append(append([]byte{}, raw[1000:1100]...), fake...), raw[ends[0]:ends[2]-10]...)
	s, got := reconnected(t,
		func(c net.Conn) { c.Write(first); c.Close() },
		func(c net.Conn) { c.Write(raw[ends[3]-777:]); c.Close() },
	)
	want := append(append([]byte{}, raw[ends[0]:ends[1]]...), raw[ends[3]:]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d: chunk 2, then all from chunk 5", len(got), len(want))
	}
	st := s.Stats()
	if skipped := int64(100 + len(fake) + 777); st.Skipped != skipped || st.Cut != int64(ends[2]-10-ends[1]) || st.Reconnects != 1 {
		t.Errorf("skipped %d, cut %d, reconnects %d; want %d, %d, 1", st.Skipped, st.Cut, st.Reconnects, skipped, ends[2]-10-ends[1])
	}
}
