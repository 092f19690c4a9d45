// Package ev44 writes and reads clusters as ev44 messages, the detector
// event schema of the ESS streaming data types (ev44_events.fbs), which
// ESS, ISIS, SINQ and ANSTO carry on Kafka and their file writers and
// live reduction read. Event44Message.go is generated from the schema:
//
//	flatc --go --go-namespace ev44 -o .. ev44_events.fbs
//
// (Debian's flatbuffers-compiler, flatc 2.0.8).
//
// An event is a cluster: its pixel_id is the bin of its centroid on a
// super-resolved grid (analysis.Grid: y*Width + x, Scale bins a pixel),
// its time its first ToA. With a time of flight (cluster --tof) the
// references are the pulses and time_of_flight the cluster's time of
// flight; without, the references are times of the run and
// time_of_flight the ns since them. Reference times are ns since the
// Unix epoch: the run's ToA 0 is at Options.Start.
package ev44

//go:generate flatc --go --go-namespace ev44 -o .. ev44_events.fbs

import (
	"errors"
	"fmt"
	"math"
	"time"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// identifier is the schema's file_identifier.
const identifier = "ev44"

// Options configure an Encoder.
type Options struct {
	Source string        // source_name: the detector
	Grid   analysis.Grid // pixel_id of a centroid
	// Start is the wall-clock time of ToA 0 (the start of the
	// acquisition), which makes the references times since the epoch.
	Start time.Time
	// MaxEvents bounds the events of a message (8 bytes each); 0 is
	// DefaultMaxEvents.
	MaxEvents int
	// FirstID is the message_id of the first message: a stream that goes
	// on from another encoder's NextID numbers on.
	FirstID int64
}

// DefaultMaxEvents keeps a message near 512 KiB, under Kafka's default
// limit of 1 MB a message.
const DefaultMaxEvents = 1 << 16

// Encoder turns batches of clusters into ev44 messages, numbered from
// Options.FirstID.
type Encoder struct {
	opt Options
	b   *flatbuffers.Builder
	id  int64
	// The message being filled.
	refs    []int64 // reference times, ns since the epoch
	refIdx  []int32
	tof     []int32
	pixels  []int32
	lastRef int64 // the current reference, in ToA ns
	// Events left out: a centroid off the grid, a cluster before the
	// first pulse, a time of flight beyond the 2.1 s of an int32 of ns.
	Outside, NoPulse, TooLate int64
}

// NewEncoder makes an encoder.
func NewEncoder(opt Options) (*Encoder, error) {
	if opt.Grid.Width == 0 {
		return nil, errors.New("ev44: no grid for the pixel ids")
	}
	if int64(opt.Grid.Width)*int64(opt.Grid.Height) > math.MaxInt32 {
		return nil, fmt.Errorf("ev44: a %d x %d grid has more bins than an int32 pixel_id holds", opt.Grid.Width, opt.Grid.Height)
	}
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = DefaultMaxEvents
	}
	return &Encoder{opt: opt, b: flatbuffers.NewBuilder(1 << 16), id: opt.FirstID}, nil
}

// NextID is the message_id of the next message.
func (e *Encoder) NextID() int64 { return e.id }

// Encode adds the clusters of c to messages and hands each full one to
// emit; the bytes are valid during the call. Flush emits the last.
func (e *Encoder) Encode(c *pixel.Clusters, emit func([]byte) error) error {
	withTOF := c.HasTOF()
	for i := range c.Len() {
		k, ok := e.opt.Grid.Bin(c.X[i], c.Y[i])
		if !ok {
			e.Outside++
			continue
		}
		// The reference and the time since it, in ns of the run's ToA.
		var ref, t int64
		if withTOF {
			if c.Pulse[i] < 0 {
				e.NoPulse++
				continue
			}
			ref, t = floorNs(c.FirstToA[i]-c.TOF[i]), floorNs(c.FirstToA[i])-floorNs(c.FirstToA[i]-c.TOF[i])
			if t > math.MaxInt32 {
				e.TooLate++
				continue
			}
		} else {
			first := floorNs(c.FirstToA[i])
			ref, t = e.lastRef, first-e.lastRef
			if len(e.refs) == 0 || t < 0 || t > math.MaxInt32 {
				ref, t = first, 0 // a new reference at this cluster
			}
		}
		if len(e.refs) == 0 || ref != e.lastRef {
			e.refs = append(e.refs, e.opt.Start.UnixNano()+ref)
			e.refIdx = append(e.refIdx, int32(len(e.tof)))
			e.lastRef = ref
		}
		e.tof = append(e.tof, int32(t))
		e.pixels = append(e.pixels, int32(k))
		if len(e.tof) == e.opt.MaxEvents {
			if err := e.Flush(emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// floorNs is t in whole ns, rounded down.
func floorNs(t pixel.Time) int64 {
	ns := int64(t / pixel.Nanosecond)
	if t%pixel.Nanosecond < 0 {
		ns--
	}
	return ns
}

// Flush emits the message being filled, if it holds events.
func (e *Encoder) Flush(emit func([]byte) error) error {
	if len(e.tof) == 0 {
		return nil
	}
	msg := e.message()
	e.refs, e.refIdx, e.tof, e.pixels = e.refs[:0], e.refIdx[:0], e.tof[:0], e.pixels[:0]
	e.id++
	return emit(msg)
}

// message builds the flatbuffer of the events held.
func (e *Encoder) message() []byte {
	b := e.b
	b.Reset()
	source := b.CreateString(e.opt.Source)
	vector := func(start func(*flatbuffers.Builder, int) flatbuffers.UOffsetT, n int, put func(i int)) flatbuffers.UOffsetT {
		start(b, n)
		for i := n - 1; i >= 0; i-- {
			put(i)
		}
		return b.EndVector(n)
	}
	refs := vector(Event44MessageStartReferenceTimeVector, len(e.refs), func(i int) { b.PrependInt64(e.refs[i]) })
	idx := vector(Event44MessageStartReferenceTimeIndexVector, len(e.refIdx), func(i int) { b.PrependInt32(e.refIdx[i]) })
	tof := vector(Event44MessageStartTimeOfFlightVector, len(e.tof), func(i int) { b.PrependInt32(e.tof[i]) })
	pix := vector(Event44MessageStartPixelIdVector, len(e.pixels), func(i int) { b.PrependInt32(e.pixels[i]) })
	Event44MessageStart(b)
	Event44MessageAddSourceName(b, source)
	Event44MessageAddMessageId(b, e.id)
	Event44MessageAddReferenceTime(b, refs)
	Event44MessageAddReferenceTimeIndex(b, idx)
	Event44MessageAddTimeOfFlight(b, tof)
	Event44MessageAddPixelId(b, pix)
	b.FinishWithFileIdentifier(Event44MessageEnd(b), []byte(identifier))
	return b.FinishedBytes()
}

// Message is a decoded ev44 message.
type Message struct {
	Source             string
	ID                 int64
	ReferenceTime      []int64
	ReferenceTimeIndex []int32
	TimeOfFlight       []int32
	PixelID            []int32
}

// Decode reads an ev44 message, checking what the schema requires: the
// identifier, the source, references with an index each going up within
// the events, pixel ids for every event or none. A damaged message is an
// error, never a panic or a huge allocation.
func Decode(msg []byte) (m Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = Message{}, fmt.Errorf("ev44: a damaged message (%v)", r)
		}
	}()
	if len(msg) < 8 || !flatbuffers.BufferHasIdentifier(msg, identifier) {
		return Message{}, errors.New("ev44: not an ev44 message (no \"ev44\" identifier)")
	}
	root := GetRootAsEvent44Message(msg, 0)
	// Every length is checked against the message before a slice of it
	// is made: the counts come from the bytes.
	fits := func(n, size int) bool { return n >= 0 && n <= len(msg)/size }
	if n := root.ReferenceTimeLength(); !fits(n, 8) || n != root.ReferenceTimeIndexLength() {
		return Message{}, fmt.Errorf("ev44: %d reference times and %d indices", n, root.ReferenceTimeIndexLength())
	}
	nt, np := root.TimeOfFlightLength(), root.PixelIdLength()
	if !fits(nt, 4) || !fits(np, 4) || np != 0 && np != nt {
		return Message{}, fmt.Errorf("ev44: %d times of flight and %d pixel ids", nt, np)
	}
	m.Source, m.ID = string(root.SourceName()), root.MessageId()
	if m.Source == "" {
		return Message{}, errors.New("ev44: no source_name")
	}
	m.ReferenceTime = make([]int64, root.ReferenceTimeLength())
	m.ReferenceTimeIndex = make([]int32, len(m.ReferenceTime))
	for i := range m.ReferenceTime {
		m.ReferenceTime[i], m.ReferenceTimeIndex[i] = root.ReferenceTime(i), root.ReferenceTimeIndex(i)
		if idx := m.ReferenceTimeIndex[i]; idx < 0 || int(idx) > nt || i > 0 && idx < m.ReferenceTimeIndex[i-1] {
			return Message{}, fmt.Errorf("ev44: reference %d indexes event %d of %d", i, idx, nt)
		}
	}
	m.TimeOfFlight, m.PixelID = make([]int32, nt), make([]int32, np)
	for i := range m.TimeOfFlight {
		m.TimeOfFlight[i] = root.TimeOfFlight(i)
	}
	for i := range m.PixelID {
		m.PixelID[i] = root.PixelId(i)
	}
	return m, nil
}

// Events calls fn with every event of m: its time, ns since the epoch
// (its reference plus its time of flight), and its pixel (-1 without
// pixel ids). Events before the first reference have none: the message
// is damaged, and Events reports it.
func (m *Message) Events(fn func(ns int64, pixel int32)) error {
	if len(m.TimeOfFlight) > 0 && (len(m.ReferenceTime) == 0 || m.ReferenceTimeIndex[0] != 0) {
		return fmt.Errorf("ev44: message %d: events before its first reference", m.ID)
	}
	r := 0
	for i, t := range m.TimeOfFlight {
		for r+1 < len(m.ReferenceTimeIndex) && int(m.ReferenceTimeIndex[r+1]) <= i {
			r++
		}
		p := int32(-1)
		if len(m.PixelID) > 0 {
			p = m.PixelID[i]
		}
		fn(m.ReferenceTime[r]+int64(t), p)
	}
	return nil
}
