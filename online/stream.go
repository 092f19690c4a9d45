package online

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/hitflow/hitflow/internal/prefault"
)

// Options configure the buffering of a live stream.
type Options struct {
	// Memory is the most bytes held in memory between the receiver and
	// the reader; 0 means DefaultMemory.
	Memory int64
	// Spool is a directory for the bytes beyond Memory. Empty, the
	// receiver waits for room instead (back-pressure on the source).
	Spool string
	// Reconnect makes a stream received over TCP connect again when the
	// connection is lost (see [Dial]).
	Reconnect bool
}

// DefaultMemory is the memory a stream may hold by default.
const DefaultMemory = 1 << 30

// Stats count what a stream did so far.
type Stats struct {
	Received   int64         // bytes passed on to the reader's queue
	Buffered   int64         // bytes in memory, not yet read
	Spooled    int64         // bytes in spool files, not yet read
	SpooledAll int64         // bytes that ever went to the spool
	Waited     time.Duration // time the receiver waited for room
	Reconnects int64         // connections made again after a loss
	Cut        int64         // bytes of chunks left incomplete by a lost connection or the stop, dropped
	Skipped    int64         // bytes before a connection's first chunk header (it joined the readout mid-stream)
	SpoolErr   error         // why spooling stopped (the receiver waited from then on); nil if it did not
}

// Stream is a live byte stream: a receiver goroutine moves the bytes
// from their source into a queue in memory, spilling to files in the
// spool directory when the memory is full, so that it never waits for
// the reader unless told to. Read takes them out in order. A stream of
// .tpx3 chunks (as it begins with a chunk header) is queued whole chunks
// at a time, so that a connection lost inside a chunk cuts that chunk
// and the next connection starts clean; other bytes pass as they come. Reading and
// the accessors are safe alongside the receiver; Read itself is for one
// goroutine.
type Stream struct {
	name  string
	opt   Options
	block int // size of the memory blocks

	mu     sync.Mutex
	cond   *sync.Cond // broadcast on every change of the queue
	parts  []*part    // the queue; parts[0] is read next
	memory int64      // bytes of the memory blocks held
	// spare holds the blocks read, for reuse, counted as free: all of
	// them, within Memory, so that a backlog that comes again (the
	// spills of a beam faster than the clustering) takes them rather
	// than new memory, whose pages cost more to map than to fill.
	spare  [][]byte
	marks  []mark // arrival times of the bytes not yet passed by ArrivedAt
	read   int64  // bytes read
	end    error  // io.EOF or the receiver's error, once it ended
	stats  Stats
	closed bool

	stop    context.CancelFunc
	done    chan struct{} // closed when the receiver returns
	waitFor bool          // Close waits for the receiver (its source can be interrupted)
}

// part is a stretch of the queue: bytes [lo, hi) of a memory block or of
// a spool file. Only the last part grows; sealed, it does not.
type part struct {
	buf    []byte // memory block; nil for a spool file
	file   *os.File
	lo, hi int64
	sealed bool
}

// mark says the bytes up to end arrived at t.
type mark struct {
	end int64
	t   time.Time
}

// maxSpoolFile is the size at which a spool file is sealed and the next
// begun, so that the disk is freed as the reader catches up.
const maxSpoolFile = 256 << 20

// newStream starts a stream; the caller starts its receiver with run,
// which watches the returned context, cancelled by Stop and Close.
func newStream(ctx context.Context, name string, opt Options) (*Stream, context.Context) {
	if opt.Memory <= 0 {
		opt.Memory = DefaultMemory
	}
	s := &Stream{name: name, opt: opt, block: int(min(opt.Memory, 4<<20)), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	ctx, s.stop = context.WithCancel(ctx)
	return s, ctx
}

// run runs receive in its own goroutine and ends the stream with its
// error (io.EOF for a clean end).
func (s *Stream) run(receive func() error) {
	go func() {
		defer close(s.done)
		err := receive()
		if err == nil {
			err = io.EOF
		}
		s.finish(err)
	}()
}

// Name is the stream's source, as given.
func (s *Stream) Name() string { return s.name }

// finish ends the queue: the reader gets the bytes still in it, then err.
func (s *Stream) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end == nil {
		s.end = err
	}
	s.cond.Broadcast()
}

// push queues p, which arrived at t: in memory while there is room, then
// in the spool, or after waiting for room (a stop does not end the wait:
// what was received is read). It returns false, with p not queued, once
// the stream has ended or was closed.
func (s *Stream) push(p []byte, t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(p) > 0 {
		if s.closed || s.end != nil {
			return false
		}
		if n := s.pushMemory(p); n > 0 {
			p = p[n:]
			continue
		}
		if s.opt.Spool != "" && s.stats.SpoolErr == nil {
			n, err := s.pushSpool(p)
			p = p[n:]
			if err != nil {
				// A full disk: nothing is lost, the source waits instead.
				s.stats.SpoolErr = err
			}
			continue
		}
		waited := time.Now()
		s.cond.Broadcast() // what was queued can be read meanwhile
		s.cond.Wait()
		s.stats.Waited += time.Since(waited)
	}
	s.marks = append(s.marks, mark{s.stats.Received, t})
	s.cond.Broadcast()
	return true
}

// pushMemory copies what fits of p into memory blocks; s.mu is held.
func (s *Stream) pushMemory(p []byte) int {
	last := s.last()
	if last == nil || last.buf == nil || last.hi == int64(len(last.buf)) {
		if s.memory+int64(s.block) > s.opt.Memory {
			return 0
		}
		if last != nil {
			last.sealed = true
		}
		last = &part{}
		if n := len(s.spare); n > 0 {
			last.buf, s.spare = s.spare[n-1], s.spare[:n-1]
		} else {
			last.buf = prefault.Make[byte](s.block, s.block) // huge pages: a source faster than the clustering fills many
		}
		s.parts = append(s.parts, last)
		s.memory += int64(s.block)
	}
	n := copy(last.buf[last.hi:], p)
	last.hi += int64(n)
	last.sealed = last.hi == int64(len(last.buf))
	s.stats.Received += int64(n)
	s.stats.Buffered += int64(n)
	return n
}

// pushSpool appends p to the spool; s.mu is held, but not while the file
// is written (the reader reads only below hi).
func (s *Stream) pushSpool(p []byte) (int, error) {
	last := s.last()
	if last == nil || last.file == nil || last.hi >= maxSpoolFile {
		f, err := os.CreateTemp(s.opt.Spool, "hitflow-spool-*")
		if err != nil {
			return 0, fmt.Errorf("spool: %w", err)
		}
		if last != nil {
			last.sealed = true
		}
		last = &part{file: f}
		s.parts = append(s.parts, last)
	}
	at := last.hi
	s.mu.Unlock()
	n, err := last.file.WriteAt(p, at)
	s.mu.Lock()
	last.hi += int64(n)
	s.stats.Received += int64(n)
	s.stats.Spooled += int64(n)
	s.stats.SpooledAll += int64(n)
	if err != nil {
		return n, fmt.Errorf("spool %s: %w", last.file.Name(), err)
	}
	return n, nil
}

func (s *Stream) last() *part {
	if len(s.parts) == 0 {
		return nil
	}
	return s.parts[len(s.parts)-1]
}

// Read implements io.Reader: it waits for bytes, and returns the
// receiver's error (io.EOF at a clean end) once every byte was read.
func (s *Stream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.parts) > 0 && s.parts[0].lo == s.parts[0].hi && (s.parts[0].sealed || s.end != nil) {
			s.drop()
		}
		if len(s.parts) > 0 && s.parts[0].lo < s.parts[0].hi {
			break
		}
		if s.end != nil {
			return 0, s.end
		}
		s.cond.Wait()
	}
	q := s.parts[0]
	var n int
	if q.buf != nil {
		n = copy(p, q.buf[q.lo:q.hi])
		s.stats.Buffered -= int64(n)
	} else {
		want := min(int64(len(p)), q.hi-q.lo)
		s.mu.Unlock()
		var err error
		n, err = q.file.ReadAt(p[:want], q.lo)
		s.mu.Lock()
		if err != nil && n < int(want) {
			return n, fmt.Errorf("%s: reading spool %s: %w", s.name, q.file.Name(), err)
		}
		s.stats.Spooled -= int64(n)
	}
	q.lo += int64(n)
	s.read += int64(n)
	// Read whole, its block is spare at once (unless a Close, while a
	// spool file was read unlocked, dropped it already).
	if q.lo == q.hi && q.sealed && len(s.parts) > 0 && s.parts[0] == q {
		s.drop()
	}
	s.cond.Broadcast()
	return n, nil
}

// drop removes the first part, read to its end; s.mu is held.
func (s *Stream) drop() {
	q := s.parts[0]
	s.parts[0] = nil
	s.parts = s.parts[1:]
	if q.buf != nil {
		s.memory -= int64(len(q.buf))
		if !s.closed {
			s.spare = append(s.spare, q.buf)
		}
		s.cond.Broadcast() // room for a receiver waiting
		return
	}
	q.file.Close()
	os.Remove(q.file.Name())
}

// Buffered is the number of bytes Read can return without waiting.
func (s *Stream) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.stats.Received - s.read)
}

// ArrivedAt is when the byte at offset (counted from the stream's start)
// arrived; for a byte not yet received, now. Offsets asked for must not
// decrease: the times of earlier bytes are forgotten.
func (s *Stream) ArrivedAt(offset int64) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.marks) && s.marks[i].end <= offset {
		i++
	}
	s.marks = s.marks[i:]
	if len(s.marks) == 0 {
		return time.Now()
	}
	return s.marks[0].t
}

// Lag is the age of the oldest byte received and not yet read: how far
// the reading is behind the source.
func (s *Stream) Lag() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, _ := slices.BinarySearchFunc(s.marks, s.read, func(m mark, read int64) int { return cmp.Compare(m.end, read+1) })
	if i == len(s.marks) {
		return 0
	}
	return time.Since(s.marks[i].t)
}

// Stats returns the counts so far.
func (s *Stream) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Stop tells the receiver to stop: the reader gets what was received,
// then io.EOF.
func (s *Stream) Stop() { s.stop() }

// Close stops the receiver and removes the spool files left; after it,
// Read returns errClosed.
func (s *Stream) Close() error {
	s.stop()
	if s.waitFor {
		<-s.done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for len(s.parts) > 0 {
		s.drop()
	}
	s.spare = nil
	s.stats.Buffered, s.stats.Spooled = 0, 0
	if s.end == nil || s.end == io.EOF {
		s.end = errClosed
	}
	s.cond.Broadcast()
	return nil
}

var errClosed = errors.New("online: stream closed")
