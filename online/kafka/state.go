package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// stateMagic opens a partition's state record; the version changes with
// the layout.
const stateMagic = "hitflow partition state 1\n"

// state is what a task needs to go on elsewhere: the offset of the next
// message and everything the clustering holds between two messages.
type state struct {
	part        int32
	next        int64
	start       time.Time
	counts      taskCounts
	settings    string
	nextMessage int64
	clock       tpx3.ClockState
	left        [3]int64 // events left out: outside, no pulse, too late
	released    pixel.Time
	maxSeen     pixel.Time
	pending     pixel.Hits // the sorter's
	tof         analysis.TOFState
	clusterer   pixel.Checkpoint
}

var le = binary.LittleEndian

func appendInts(b []byte, vs ...int64) []byte {
	for _, v := range vs {
		b = le.AppendUint64(b, uint64(v))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = le.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendHits(b []byte, h *pixel.Hits) []byte {
	n := h.Len()
	b = le.AppendUint32(b, uint32(n))
	b = append(b, byte(b2i(h.Calibrated())))
	for i := range n {
		b = le.AppendUint16(b, h.X[i])
		b = le.AppendUint16(b, h.Y[i])
		b = le.AppendUint64(b, uint64(h.ToA[i]))
		b = le.AppendUint16(b, h.ToT[i])
		if h.Calibrated() {
			b = le.AppendUint32(b, math.Float32bits(h.E[i]))
		}
	}
	return b
}

func appendStats(b []byte, s pixel.Stats) []byte {
	return appendInts(b, s.Hits, s.Clustered, s.OutOfRange, s.Late, s.Restarts, s.Clusters)
}

// append appends the state's record.
func (s *state) append(b []byte) []byte {
	b = append(b, stateMagic...)
	b = le.AppendUint32(b, uint32(s.part))
	b = appendInts(b, s.next, s.start.UnixNano(), s.counts.Messages, s.counts.Skipped, s.counts.Bytes, s.counts.Masked, s.counts.Missed)
	b = appendString(b, s.settings)
	b = appendInts(b, s.nextMessage, s.clock.Ref, b2i(s.clock.Begun), s.left[0], s.left[1], s.left[2])
	b = appendInts(b, int64(s.released), int64(s.maxSeen))
	b = appendHits(b, &s.pending)
	b = le.AppendUint32(b, uint32(len(s.tof.Refs)))
	for _, t := range s.tof.Refs {
		b = appendInts(b, int64(t))
	}
	b = appendInts(b, s.tof.Passed, s.tof.Missing, s.tof.Without)
	c := &s.clusterer
	b = appendInts(b, int64(c.Now), c.NextID)
	b = appendStats(b, c.Stats)
	return appendHits(b, &c.Open)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// stateReader reads a state record, remembering the first shortfall.
type stateReader struct {
	b   []byte
	err error
}

var errShort = errors.New("the record ends early")

var zeros [8]byte

// take returns the next n bytes; zeros (at most 8) past the end.
func (r *stateReader) take(n int) []byte {
	if r.err != nil || len(r.b) < n || n < 0 {
		r.err = errShort
		return zeros[:min(max(n, 0), len(zeros))]
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *stateReader) int() int64       { return int64(le.Uint64(r.take(8))) }
func (r *stateReader) u32() int         { return int(le.Uint32(r.take(4))) }
func (r *stateReader) str() string      { return string(r.take(r.u32())) }
func (r *stateReader) time() pixel.Time { return pixel.Time(r.int()) }

func (r *stateReader) ints(vs ...*int64) {
	for _, v := range vs {
		*v = r.int()
	}
}

// count reads a count of items of size bytes each, refusing one the
// record cannot hold.
func (r *stateReader) count(size int) int {
	n := r.u32()
	if n*size > len(r.b) {
		r.err = errShort
		return 0
	}
	return n
}

func (r *stateReader) hits(h *pixel.Hits) {
	n := r.u32()
	flag := r.take(1)[0]
	r.check(flag == 0 || flag == 1 && n > 0, "a calibration flag of %d for %d hits", flag, n)
	calibrated := flag == 1
	size := 14
	if calibrated {
		size += 4
	}
	if n*size > len(r.b) {
		r.err = errShort
		return
	}
	h.Reset()
	for range n {
		h.Append(le.Uint16(r.take(2)), le.Uint16(r.take(2)), pixel.Time(r.int()), le.Uint16(r.take(2)))
		if calibrated {
			h.E = append(h.E, math.Float32frombits(le.Uint32(r.take(4))))
		}
	}
}

// check notes a bad value, unless an error came first.
func (r *stateReader) check(ok bool, format string, args ...any) {
	if !ok && r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *stateReader) stats(s *pixel.Stats) {
	r.ints(&s.Hits, &s.Clustered, &s.OutOfRange, &s.Late, &s.Restarts, &s.Clusters)
}

// readState reads a state record.
func readState(b []byte) (*state, error) {
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return nil, errors.New("not a partition state of this hitflow version")
	}
	r := &stateReader{b: b[len(stateMagic):]}
	s := &state{part: int32(r.u32())}
	var start, begun int64
	r.ints(&s.next, &start, &s.counts.Messages, &s.counts.Skipped, &s.counts.Bytes, &s.counts.Masked, &s.counts.Missed)
	s.start = time.Unix(0, start).UTC()
	s.settings = r.str()
	r.ints(&s.nextMessage, &s.clock.Ref, &begun, &s.left[0], &s.left[1], &s.left[2])
	r.check(begun == 0 || begun == 1, "a clock flag of %d", begun)
	s.clock.Begun = begun == 1
	s.released, s.maxSeen = r.time(), r.time()
	r.hits(&s.pending)
	refs := r.count(8)
	for range refs {
		s.tof.Refs = append(s.tof.Refs, r.time())
	}
	r.ints(&s.tof.Passed, &s.tof.Missing, &s.tof.Without)
	c := &s.clusterer
	c.Now, c.NextID = r.time(), r.int()
	r.stats(&c.Stats)
	r.hits(&c.Open)
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the end", len(r.b))
	}
	return s, r.err
}
