package kafka

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hitflow/hitflow/format/ev44"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// Processing says how a partition's raw data become events: the settings
// of `hitflow cluster` that change the clusters or the events. Every
// member of a group must use the same: a partition's state names them,
// and a member refuses the state of other settings.
type Processing struct {
	Layout     tpx3.Layout
	Mask       *pixel.Mask // nil: every pixel
	Correction Correction  // nil: none
	// CorrectionID names the correction in the state (a digest of its
	// file): members with other corrections refuse each other's.
	CorrectionID string
	Unsorted     pixel.Time // reorder window; 0 trusts the order
	Cluster      pixel.Config
	// TOF, when set, gives events their time of flight from the pulses
	// of this TDC edge, with Period as analysis.TOF's.
	TOF    *tpx3.TDCEdge
	Period pixel.Time
	// Events: Source names the detector; a topic of several partitions
	// has a detector each, named Source_P for partition P. Start is the
	// wall-clock time of ToA 0 for a partition met for the first time;
	// after that its state keeps it.
	Events ev44.Options
}

// Correction changes hits' times (a time-walk correction). It has the
// methods of pipeline.Correction, which this package may not import (a
// Kafka reader feeds the pipeline, deps_test.go): a value of one is a
// value of the other.
type Correction interface {
	Correct(*pixel.Hits)
	Spread() pixel.Time
}

// window is the sorter's reorder window.
func (p *Processing) window() pixel.Time {
	if p.Correction == nil {
		return p.Unsorted
	}
	return p.Unsorted + p.Correction.Spread()
}

// settings names what the results depend on, for the state to check.
func (p *Processing) settings() string {
	c, g := &p.Cluster, &p.Events.Grid
	s := fmt.Sprintf("definition %v, dt %v ns, sensor %dx%d, restart %v ns, reorder window %v ns, %d bins a pixel, source %q, %d events a message",
		c.Definition, c.Dt.Ns(), c.Width, c.Height, c.RestartGap().Ns(), p.window().Ns(), g.Scale, p.Events.Source, cmp.Or(p.Events.MaxEvents, ev44.DefaultMaxEvents))
	if p.Correction != nil {
		s += ", time-walk " + p.CorrectionID
	}
	if p.Mask != nil {
		s += fmt.Sprintf(", %d pixels masked", p.Mask.Pixels())
	}
	if p.TOF != nil {
		s += fmt.Sprintf(", time of flight from %v, period %v ns", *p.TOF, p.Period.Ns())
	}
	return s
}

// source is the source_name of partition part of a topic of n.
func (p *Processing) source(part int32, n int) string {
	if n == 1 {
		return p.Events.Source
	}
	return fmt.Sprintf("%s_%d", p.Events.Source, part)
}

// taskCounts are a partition's counts, kept in its state so that they
// cover the whole stream whichever members read it.
type taskCounts struct {
	Messages, Skipped, Bytes, Masked, Missed int64
}

// task clusters one partition's messages into ev44 events, one message at
// a time, and can stop between two and go on elsewhere from its state.
type task struct {
	part   int32
	source string
	next   int64 // offset of the next message; -1 before the first
	start  time.Time
	counts taskCounts

	proc   *Processing
	dec    *tpx3.RawReader
	msg    bytes.Reader  // the message dec reads
	sorter *pixel.Sorter // nil with no reorder window
	cl     *pixel.Clusterer
	tof    *analysis.TOF
	enc    *ev44.Encoder

	hits, sorted pixel.Hits
	out          pixel.Clusters
	refs         []pixel.Time
	cp           pixel.Checkpoint
	changed      bool // since the last checkpoint, or taken over
	// What this member did since the last checkpoint (counts and the
	// encoder's are the partition's, whoever clustered it).
	member GroupStats
}

// newTask starts partition part of a topic of n from its state, or from
// the start when state is nil.
func newTask(proc *Processing, part int32, n int, st *state) (*task, error) {
	t := &task{part: part, source: proc.source(part, n), next: -1, start: proc.Events.Start, proc: proc, changed: true}
	if st != nil {
		t.next, t.start, t.counts = st.next, st.start, st.counts
	}
	opt := proc.Events
	opt.Source, opt.Start = t.source, t.start
	if st != nil {
		opt.FirstID = st.nextMessage
	}
	var err error
	if t.enc, err = ev44.NewEncoder(opt); err != nil {
		return nil, err
	}
	if t.cl, err = pixel.NewClusterer(proc.Cluster); err != nil {
		return nil, err
	}
	t.cl.KeepOpenHits(true) // for the checkpoints: no cluster folded
	if w := proc.window(); w > 0 {
		if t.sorter, err = pixel.NewSorter(w, proc.Cluster.RestartGap()); err != nil {
			return nil, err
		}
	}
	if proc.TOF != nil {
		t.tof = &analysis.TOF{Period: proc.Period}
	}
	t.dec = tpx3.NewRawReader(nil, "", proc.Layout)
	t.out.Reset()
	if st == nil {
		return t, nil
	}
	t.dec.SetClock(st.clock)
	if t.sorter != nil {
		t.sorter.Resume(&st.pending, st.released, st.maxSeen)
	}
	if t.tof != nil {
		t.tof.Restore(st.tof)
	}
	t.enc.Outside, t.enc.NoPulse, t.enc.TooLate = st.left[0], st.left[1], st.left[2]
	if err := t.cl.Resume(&st.clusterer, &t.out); err != nil {
		return nil, err
	}
	return t, nil
}

// feed clusters a message at offset and hands the full ev44 messages to
// emit. A message that is not whole .tpx3 chunks is skipped and counted.
func (t *task) feed(offset int64, msg []byte, emit func([]byte) error) error {
	if t.next >= 0 && offset > t.next {
		t.counts.Missed += offset - t.next // expired from the brokers, or transaction markers
		t.member.Missed += offset - t.next
	}
	t.next, t.changed = offset+1, true
	if why := notRaw(msg); why != "" {
		t.counts.Skipped++
		t.member.Skipped++
		return nil
	}
	t.counts.Messages++
	t.counts.Bytes += int64(len(msg))
	t.member.Messages++
	t.member.Bytes += int64(len(msg))
	t.msg.Reset(msg)
	t.dec.Reset(&t.msg, fmt.Sprintf("partition %d offset %d", t.part, offset))
	for {
		readErr := t.dec.Read(&t.hits)
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return readErr // notRaw let through only whole chunks
		}
		t.prepare()
		late := t.cl.Stats().Late
		if t.sorter != nil {
			t.sorted.Reset()
			t.sorter.PushTo(&t.sorted, &t.hits)
			t.cl.AddTo(&t.out, &t.sorted)
		} else {
			t.cl.AddTo(&t.out, &t.hits)
		}
		t.member.Late += t.cl.Stats().Late - late
		if err := t.publish(emit); err != nil {
			return err
		}
		if err := t.cl.Err(); err != nil {
			return fmt.Errorf("partition %d offset %d: %w", t.part, offset, err)
		}
		if readErr != nil {
			return nil
		}
	}
}

// prepare masks and corrects the hits read, and passes on the pulses.
func (t *task) prepare() {
	if t.proc.Mask != nil {
		t.counts.Masked += int64(t.proc.Mask.Filter(&t.hits))
	}
	if t.proc.Correction != nil {
		t.proc.Correction.Correct(&t.hits)
	}
	if t.tof != nil {
		t.refs = t.refs[:0]
		for _, p := range t.dec.TDC() {
			if p.Edge == *t.proc.TOF {
				t.refs = append(t.refs, p.Time)
			}
		}
		t.tof.AddReferences(t.refs)
	}
}

// publish encodes the clusters emitted so far.
func (t *task) publish(emit func([]byte) error) error {
	if t.out.Len() == 0 {
		return nil
	}
	if t.tof != nil {
		t.tof.Assign(&t.out)
	}
	left := t.enc.Outside + t.enc.NoPulse + t.enc.TooLate
	err := t.enc.Encode(&t.out, emit)
	left = t.enc.Outside + t.enc.NoPulse + t.enc.TooLate - left
	t.member.Clusters += int64(t.out.Len()) - left
	t.member.Left += left
	t.out.Reset()
	return err
}

// finish ends the stream: every open cluster is emitted, as at the end
// of a file.
func (t *task) finish(emit func([]byte) error) error {
	if t.sorter != nil {
		t.sorted.Reset()
		t.sorter.FlushTo(&t.sorted)
		t.cl.AddTo(&t.out, &t.sorted)
	}
	t.cl.FlushTo(&t.out)
	return t.publish(emit)
}

// checkpoint publishes the message being filled and returns the state.
func (t *task) checkpoint(emit func([]byte) error, dst []byte) ([]byte, error) {
	if err := t.enc.Flush(emit); err != nil {
		return dst, err
	}
	st := state{part: t.part, next: t.next, start: t.start, counts: t.counts, settings: t.proc.settings(),
		nextMessage: t.enc.NextID(), clock: t.dec.Clock(), left: [3]int64{t.enc.Outside, t.enc.NoPulse, t.enc.TooLate}}
	if t.sorter != nil {
		st.released, st.maxSeen = t.sorter.Checkpoint(&st.pending)
	}
	if t.tof != nil {
		st.tof = t.tof.State()
	}
	if err := t.cl.Checkpoint(&t.cp); err != nil {
		return dst, err
	}
	st.clusterer = t.cp
	return st.append(dst), nil
}
