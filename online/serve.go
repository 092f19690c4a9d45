package online

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
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
	// later by the run's span and a millisecond, rounded up to a multiple
	// of tpx3.ToAPeriod: a long live run at rates faster than the
	// simulation, which then runs, and is encoded, before the first
	// client is accepted. Each copy is the first's chunks with their
	// times shifted, so a readout faster than the clustering costs the
	// cores it shares little.
	Repeat int
}

// chunk is one .tpx3 chunk to send, with its hits and the latest time
// sent with it or before.
type chunk struct {
	raw  []byte
	hits int
	due  pixel.Time
	// later makes raw's hits this much later (tpx3.Later), in place, just
	// before raw is sent: a repeated run sends the same bytes once a copy,
	// each time a period later, and only the sender touches them.
	later pixel.Time
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan chunk, aheadChunks)
	queue := func(c chunk) error {
		select {
		case chunks <- c:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var run []chunk
	if opt.Repeat > 1 {
		err := makeChunks(sim, func(c chunk) error {
			run = append(run, c)
			return ctx.Err()
		})
		if err != nil {
			return st, cmp.Or(ctx.Err(), err)
		}
	}
	made := make(chan error, 1)
	go func() {
		defer close(chunks)
		if opt.Repeat <= 1 {
			made <- makeChunks(sim, queue)
			return
		}
		made <- repeatChunks(run, opt.Repeat, queue)
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

// makeChunks simulates the run sim and hands emit the chunks of its
// .tpx3 file, one at a time.
func makeChunks(sim pixelsim.Options, emit func(chunk) error) error {
	var buf bytes.Buffer
	w, err := tpx3.NewHitWriter(&buf, tpx3.TPX3)
	if err != nil {
		return err
	}
	inChunk := 0 // hits written into the chunk being filled
	var latest pixel.Time
	send := func() error {
		err := emit(chunk{raw: bytes.Clone(buf.Bytes()), hits: inChunk, due: latest})
		buf.Reset()
		inChunk = 0
		return err
	}
	err = pixelsim.Generate(sim, func(h *pixel.Hits) error {
		// In pieces that fill the chunk being written.
		for lo := 0; lo < h.Len(); {
			hi := min(h.Len(), lo+tpx3.ChunkPackets-inChunk)
			piece := pixel.Hits{X: h.X[lo:hi], Y: h.Y[lo:hi], ToA: h.ToA[lo:hi], ToT: h.ToT[lo:hi]}
			latest = max(latest, slices.Max(piece.ToA))
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
	})
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

// repeatChunks hands emit the chunks of run repeat times, each copy later
// by repeatPeriod: the same bytes but for the packets' SPIDR time, which
// the sending shifts in place by a period a copy (server.send).
func repeatChunks(run []chunk, repeat int, emit func(chunk) error) error {
	period := repeatPeriod(run)
	for k := range repeat {
		for _, c := range run {
			c.due += pixel.Time(k) * period
			if k > 0 {
				c.later = period
			}
			if err := emit(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// repeatPeriod is how much later each copy of a repeated run comes: its
// span and a millisecond, rounded up to the ToA counter's period so that
// a copy's packets differ from the first's only in their SPIDR time.
func repeatPeriod(run []chunk) pixel.Time {
	var span pixel.Time
	for _, c := range run {
		span = max(span, c.due)
	}
	return (span + pixel.Millisecond + tpx3.ToAPeriod - 1) / tpx3.ToAPeriod * tpx3.ToAPeriod
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
	if c.later != 0 {
		if err := tpx3.Later(c.raw, c.later); err != nil {
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
