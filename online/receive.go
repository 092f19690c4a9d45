package online

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// receiver moves bytes from a source into a stream. While they are .tpx3
// chunks it passes on whole chunks only, and keeps the start of an
// incomplete one until the rest comes.
type receiver struct {
	s      *Stream
	stage  []byte // stage[:n]: read, not yet queued
	n      int
	framed bool // chunks are still tracked: a byte where a header should be that is none ends it, and the decoder reports that byte
	// A connection joining a readout mid-stream begins inside a chunk:
	// the bytes before the first chunk header are skipped.
	sync bool
}

func newReceiver(s *Stream) *receiver {
	// A chunk is at most 8 + 65535 bytes: the stage always has room left.
	return &receiver{s: s, stage: make([]byte, 1<<20), framed: true}
}

// errEnded is the receiver's signal that the stream no longer takes bytes.
var errEnded = errors.New("online: stream ended")

// take reads once from r and queues the whole chunks read.
func (rc *receiver) take(r io.Reader) (int, error) {
	n, err := r.Read(rc.stage[rc.n:])
	rc.n += n
	if n > 0 && rc.sync {
		rc.resync()
	}
	if n > 0 && !rc.sync {
		end := rc.n
		if rc.framed {
			end = rc.whole()
		}
		if end > 0 {
			if !rc.s.push(rc.stage[:end], time.Now()) {
				return n, errEnded
			}
			rc.n = copy(rc.stage, rc.stage[end:rc.n])
		}
	}
	return n, err
}

// syncWindow is how far a connection's first chunk header is looked
// for: a chunk is at most 8 + 65535 bytes, so a .tpx3 stream has a
// header within any stretch this long; a stream without one is not
// .tpx3, and passes as it is (the decoder reports it).
const syncWindow = 2 * (8 + 65535)

// resync skips the stage to the first chunk header, when it holds one,
// and counts the bytes skipped.
func (rc *receiver) resync() {
	b := rc.stage[:rc.n]
	for p := 0; p+8 <= len(b); p++ {
		if !header(b, p) {
			continue
		}
		// A header checked by the next one, when it is there.
		if next := p + 8 + int(binary.LittleEndian.Uint16(b[p+6:])); next+8 <= len(b) && !header(b, next) {
			continue
		}
		rc.skip(p)
		return
	}
	if rc.n >= syncWindow {
		rc.sync, rc.framed = false, false
	}
}

// header reports whether b holds a chunk header at p: "TPX3", and a
// size of whole packets.
func header(b []byte, p int) bool {
	return string(b[p:p+4]) == "TPX3" && binary.LittleEndian.Uint16(b[p+6:])%8 == 0
}

// skip drops the first k bytes of the stage, counted, and ends the
// search for a header.
func (rc *receiver) skip(k int) {
	rc.s.mu.Lock()
	rc.s.stats.Skipped += int64(k)
	rc.s.mu.Unlock()
	rc.n = copy(rc.stage, rc.stage[k:rc.n])
	rc.sync = false
}

// whole is the length of the whole chunks at the start of the stage.
func (rc *receiver) whole() int {
	pos := 0
	for rc.n-pos >= 8 {
		h := rc.stage[pos : pos+8]
		if string(h[:4]) != "TPX3" {
			rc.framed = false
			return rc.n
		}
		next := pos + 8 + int(binary.LittleEndian.Uint16(h[6:]))
		if next > rc.n {
			break
		}
		pos = next
	}
	return pos
}

// passRest queues the incomplete chunk left at the end of a source, for
// the decoder to report with its byte offset.
func (rc *receiver) passRest() {
	if rc.n > 0 {
		rc.s.push(rc.stage[:rc.n], time.Now())
		rc.n = 0
	}
}

// cut drops the incomplete chunk left when a connection was lost or the
// stream stopped, and counts its bytes.
func (rc *receiver) cut() {
	if rc.sync { // no header found yet
		rc.skip(rc.n)
		return
	}
	rc.s.mu.Lock()
	rc.s.stats.Cut += int64(rc.n)
	rc.s.mu.Unlock()
	rc.n = 0
}

// Reconnection back-off: the first wait, and the longest.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// dialTimeout bounds one connection attempt.
const dialTimeout = 10 * time.Second

// Dial connects to a readout that serves a byte stream over TCP at addr
// (host:port), as SERVAL's raw destination does, and receives it until
// the server closes the connection or the stream is stopped. Each
// connection may join the readout mid-stream: the bytes before its first
// chunk header are skipped and counted (Stats.Skipped). A
// connection lost otherwise (an error, or a close inside a chunk) ends the stream with an error, after the bytes before it;
// with opt.Reconnect, the incomplete chunk is cut and counted, and Dial's
// stream connects again, waiting between attempts from minBackoff up to
// maxBackoff, until it succeeds or the stream is stopped.
func Dial(ctx context.Context, addr string, opt Options) (*Stream, error) {
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil && !opt.Reconnect {
		return nil, err
	}
	s, ctx := newStream(ctx, "tcp://"+addr, opt)
	s.waitFor = true
	s.run(func() error {
		rc := newReceiver(s)
		backoff := minBackoff
		for {
			if conn != nil {
				err := rc.drain(ctx, conn)
				if ctx.Err() != nil || errors.Is(err, errEnded) {
					rc.cut()
					return nil
				}
				if err == io.EOF && rc.n == 0 {
					return nil
				}
				if !opt.Reconnect {
					rc.passRest()
					if err == io.EOF {
						return nil // the decoder reports the chunk cut short
					}
					return fmt.Errorf("%s: %w", s.name, err)
				}
				rc.cut()
				conn = nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			if conn, err = d.DialContext(ctx, "tcp", addr); err != nil {
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			backoff = minBackoff
			s.mu.Lock()
			s.stats.Reconnects++
			s.mu.Unlock()
		}
	})
	return s, nil
}

// drain receives from conn until an error, closing it then; stopping the
// stream interrupts a read.
func (rc *receiver) drain(ctx context.Context, conn net.Conn) error {
	defer conn.Close()
	rc.sync, rc.framed = true, true
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		if _, err := rc.take(conn); err != nil {
			return err
		}
	}
}

// pollInterval is how often a followed file is checked for growth.
const pollInterval = 20 * time.Millisecond

// Follow reads the file name while it is being written: at its end it
// waits for more, until the file has not grown for idle or the stream is
// stopped. A raw file's last incomplete chunk is passed on when the file
// stops growing (the decoder reports it), and cut and counted at a stop.
func Follow(ctx context.Context, name string, idle time.Duration, opt Options) (*Stream, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	s, ctx := newStream(ctx, name, opt)
	s.waitFor = true
	s.run(func() error {
		defer f.Close()
		return newReceiver(s).all(ctx, &growing{ctx: ctx, f: f, idle: idle, grew: time.Now()})
	})
	return s, nil
}

// growing reads a file being written: at its end, it waits for more
// until the file has not grown for idle (then io.EOF) or ctx is done.
type growing struct {
	ctx  context.Context
	f    *os.File
	idle time.Duration
	grew time.Time
}

func (g *growing) Read(p []byte) (int, error) {
	for {
		n, err := g.f.Read(p)
		if n > 0 {
			g.grew = time.Now()
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if time.Since(g.grew) >= g.idle {
			return 0, io.EOF
		}
		select {
		case <-g.ctx.Done():
			return 0, g.ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// Receive streams r, a pipe such as standard input, until its end or a
// stop. A reader without read deadlines cannot be interrupted: at a stop
// the stream ends at once and its receiver is left to its read.
func Receive(ctx context.Context, name string, r io.Reader, opt Options) *Stream {
	s, ctx := newStream(ctx, name, opt)
	d, ok := r.(interface{ SetReadDeadline(time.Time) error })
	s.waitFor = ok && d.SetReadDeadline(time.Time{}) == nil
	if s.waitFor {
		context.AfterFunc(ctx, func() { d.SetReadDeadline(time.Now()) })
	} else {
		context.AfterFunc(ctx, func() { s.finish(io.EOF) })
	}
	s.run(func() error { return newReceiver(s).all(ctx, r) })
	return s
}

// all receives r until its end (the incomplete chunk left is passed on),
// an error (likewise, then the error) or a stop (it is cut).
func (rc *receiver) all(ctx context.Context, r io.Reader) error {
	for {
		_, err := rc.take(r)
		switch {
		case errors.Is(err, errEnded) || ctx.Err() != nil:
			rc.cut()
			return nil
		case err == io.EOF:
			rc.passRest()
			return nil
		case err != nil:
			rc.passRest()
			return fmt.Errorf("%s: %w", rc.s.name, err)
		}
	}
}
