package online

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// ServeStats count what a simulated readout served.
type ServeStats struct {
	Hits        int64 // in chunks sent whole
	Bytes       int64
	Connections int           // clients served
	LostHits    int64         // in chunks whose sending failed when a client went away
	Late        time.Duration // the most a chunk left after its time: the server did not keep the pace
}

// ServeOptions say how a simulated run is served.
type ServeOptions struct {
	// Speed is the pace: 1 serves in real time, so that the run's rate
	// is the rate served; 2 twice as fast; 0 as fast as the client reads.
	Speed float64
	// Repeat serves the run this many times (0 counts as 1), each copy
	// later by the run's span and a millisecond: a long live run at
	// rates faster than the simulation, which then runs in memory before
	// the first client is accepted.
	Repeat int
}

// chunk is one .tpx3 chunk to send, with its hits and the latest time
// sent with it or before.
type chunk struct {
	raw  []byte
	hits int
	due  pixel.Time
}

// Serve plays a simulated readout: it sends the .tpx3 bytes of the run
// sim (exactly those of the file the simulation would write) to the
// client accepted on l, each chunk when its hits come due. The chunks
// are made ahead in a goroutine of their own. One client is served at a
// time; the run pauses while none is connected, and a client that goes
// away loses the chunk being sent, the next one gets the rest. It returns
// when the run was sent (closing the connection) or ctx is done, and
// closes l.
func Serve(ctx context.Context, l net.Listener, sim pixelsim.Options, opt ServeOptions) (ServeStats, error) {
	var st ServeStats
	if opt.Speed < 0 || opt.Repeat < 0 {
		return st, fmt.Errorf("online: serving at speed %v, %d times", opt.Speed, opt.Repeat)
	}
	defer context.AfterFunc(ctx, func() { l.Close() })()
	defer l.Close()
	var run *pixel.Hits
	if opt.Repeat > 1 {
		run = &pixel.Hits{}
		err := pixelsim.Generate(sim, func(h *pixel.Hits) error {
			run.AppendRange(h, 0, h.Len())
			return ctx.Err()
		})
		if err != nil {
			return st, cmp.Or(ctx.Err(), err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan chunk, aheadChunks)
	made := make(chan error, 1)
	go func() {
		defer close(chunks)
		made <- makeChunks(ctx, sim, run, max(opt.Repeat, 1), chunks)
	}()
	s := server{ctx: ctx, l: l, speed: opt.Speed, st: &st}
	var err error
	for c := range chunks {
		if err = s.send(c); err != nil {
			break
		}
	}
	cancel()
	for range chunks { // the maker ends on the cancellation
	}
	s.close()
	if err == nil {
		err = <-made
	}
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return st, nil
	}
	return st, err
}

// aheadChunks is how many chunks are made ahead of the sending: 64 MiB.
const aheadChunks = 1024

// makeChunks encodes the run into chunks: sim simulated as it goes, or
// the run simulated before repeated times, each copy shifted in time.
func makeChunks(ctx context.Context, sim pixelsim.Options, run *pixel.Hits, repeat int, out chan<- chunk) error {
	var buf bytes.Buffer
	w, err := tpx3.NewHitWriter(&buf, tpx3.TPX3)
	if err != nil {
		return err
	}
	var piece pixel.Hits
	inChunk := 0 // hits written into the chunk being filled
	var latest pixel.Time
	send := func() error {
		select {
		case out <- chunk{bytes.Clone(buf.Bytes()), inChunk, latest}:
		case <-ctx.Done():
			return ctx.Err()
		}
		buf.Reset()
		inChunk = 0
		return nil
	}
	// add writes the hits of h, later by shift, in pieces that fill the
	// chunk being written.
	add := func(h *pixel.Hits, shift pixel.Time) error {
		for lo := 0; lo < h.Len(); {
			hi := min(h.Len(), lo+tpx3.ChunkPackets-inChunk)
			piece.Reset()
			for i := lo; i < hi; i++ {
				t := h.ToA[i] + shift
				piece.Append(h.X[i], h.Y[i], t, h.ToT[i])
				latest = max(latest, t)
			}
			if err := w.Write(&piece); err != nil {
				return err
			}
			inChunk += hi - lo
			lo = hi
			if inChunk == tpx3.ChunkPackets {
				// A full chunk: flushing sends it whole, and only it.
				if err := w.Flush(); err != nil {
					return err
				}
				if err := send(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if run == nil {
		err = pixelsim.Generate(sim, func(h *pixel.Hits) error { return add(h, 0) })
	} else {
		var span pixel.Time
		for _, t := range run.ToA {
			span = max(span, t)
		}
		// On the 1.5625 ns grid of the packets.
		period := (span + pixel.Millisecond + 99) / 100 * 100
		for k := range repeat {
			if err = add(run, pixel.Time(k)*period); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if buf.Len() > 0 {
		return send()
	}
	return nil
}

// server sends the chunks of a run to one client at a time.
type server struct {
	ctx   context.Context
	l     net.Listener
	speed float64
	st    *ServeStats

	conn  net.Conn
	done  func() bool // stops closing conn when ctx is done
	start time.Time   // when time 0 of the run is due
	timer *time.Timer
}

// send sends a chunk when it is due to the client, accepting one when
// there is none.
func (s *server) send(c chunk) error {
	if s.conn == nil {
		if err := s.accept(); err != nil {
			return err
		}
	}
	if s.speed > 0 {
		if err := s.wait(s.start.Add(time.Duration(float64(c.due) / float64(pixel.Nanosecond) / s.speed))); err != nil {
			return err
		}
	}
	n, err := s.conn.Write(c.raw)
	if err == nil {
		s.st.Hits += int64(c.hits)
		s.st.Bytes += int64(n)
		return nil
	}
	s.close()
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		return err
	}
	s.st.LostHits += int64(c.hits) // gone with its client; the next chunk goes to the next
	return nil
}

// accept waits for a client; the run's clock stands still meanwhile.
func (s *server) accept() error {
	waited := time.Now()
	c, err := s.l.Accept()
	if err != nil {
		return cmp.Or(s.ctx.Err(), err)
	}
	s.conn = c
	s.done = context.AfterFunc(s.ctx, func() { c.Close() })
	s.st.Connections++
	if s.start.IsZero() {
		s.start = time.Now()
	} else {
		s.start = s.start.Add(time.Since(waited))
	}
	return nil
}

// wait waits until at, or notes how late the server is.
func (s *server) wait(at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		s.st.Late = max(s.st.Late, -d)
		return nil
	}
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.ctx.Done():
		return s.ctx.Err()
	case <-s.timer.C:
		return nil
	}
}

func (s *server) close() {
	if s.conn != nil {
		s.done()
		s.conn.Close()
		s.conn = nil
	}
}
