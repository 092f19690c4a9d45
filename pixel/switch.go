package pixel

import "fmt"

// Switch clusters a stream with the sequential [Clusterer] or with
// [Lanes], and changes from one to the other when asked ([Switch.Use]):
// at the next gap in the stream, a hit more than dt after every earlier
// one, before which every cluster is finished under any definition. The
// one in use is flushed there, and the other goes on from its position in
// the stream (times, arrival numbers, cluster ids, counts), so the
// clusters are those of either mode alone. A stream without such a gap
// stays with the clusterer it has. A late hit after a change (one earlier
// than the gap) can no longer join the clusters before it, as happens at
// the lanes' borders too.
//
// Which mode to use, and when, is the caller's policy: pixel/pipeline's
// auto mode times both on the stream itself.
type Switch struct {
	seq   *Clusterer
	lanes *Lanes
	cur   Stream
	next  Stream // the clusterer to change to at the next gap, or nil
	out   Clusters
}

// NewSwitch returns a Switch clustering sequentially until told otherwise;
// its lanes have the given workers and hits per window (see [NewLanes]).
func NewSwitch(cfg Config, workers, windowHits int) (*Switch, error) {
	seq, err := NewClusterer(cfg)
	if err != nil {
		return nil, err
	}
	lanes, err := NewLanes(cfg, workers, windowHits)
	if err != nil {
		return nil, err
	}
	s := &Switch{seq: seq, lanes: lanes, cur: seq}
	s.out.Reset()
	return s, nil
}

// Use asks for mode m, Sequential or LanesMode, from the next gap on (at
// once before the first hit); asking for the mode in use cancels a change
// not yet made.
func (s *Switch) Use(m Mode) {
	var want Stream
	switch m {
	case Sequential:
		want = s.seq
	case LanesMode:
		want = s.lanes
	default:
		panic(fmt.Sprintf("pixel: Switch.Use(%v): want sequential or lanes", m))
	}
	s.next = want
	if want == s.cur {
		s.next = nil
	}
}

// Mode is the mode clustering now.
func (s *Switch) Mode() Mode { return s.modeOf(s.cur) }

// Next is the mode the stream goes on with: the one it changes to at the
// next gap, or the one in use when no change is waiting.
func (s *Switch) Next() Mode {
	if s.next != nil {
		return s.modeOf(s.next)
	}
	return s.Mode()
}

func (s *Switch) modeOf(st Stream) Mode {
	if st == Stream(s.lanes) {
		return LanesMode
	}
	return Sequential
}

func (s *Switch) KeepMembers(keep bool) {
	s.seq.KeepMembers(keep)
	s.lanes.KeepMembers(keep)
}

func (s *Switch) Stats() Stats { return s.cur.Stats() }

func (s *Switch) Err() error {
	if err := s.seq.Err(); err != nil {
		return err
	}
	return s.lanes.Err()
}

func (s *Switch) Add(h *Hits) *Clusters {
	s.out.Reset()
	s.AddTo(&s.out, h)
	return &s.out
}

func (s *Switch) Flush() *Clusters {
	s.out.Reset()
	s.FlushTo(&s.out)
	return &s.out
}

func (s *Switch) FlushTo(dst *Clusters) { s.cur.FlushTo(dst) }

// Close ends the lanes' goroutines (see [Stream]).
func (s *Switch) Close() { s.lanes.Close() }

func (s *Switch) AddTo(dst *Clusters, h *Hits) {
	if s.next != nil {
		g := gapAt(h, s.at(s.cur).now, &s.seq.cfg)
		if g < 0 {
			s.cur.AddTo(dst, h)
			return
		}
		s.cur.AddTo(dst, h.view(0, g))
		s.cur.FlushTo(dst)
		*s.at(s.next) = *s.at(s.cur)
		s.cur, s.next = s.next, nil
		h = h.view(g, h.Len())
	}
	s.cur.AddTo(dst, h)
}

// at is the position in the stream of clusterer st.
func (s *Switch) at(st Stream) *position {
	if st == Stream(s.lanes) {
		return &s.lanes.position
	}
	return &s.seq.position
}

// gapAt returns the first hit of h inside the sensor more than dt after
// every earlier one (the latest so far at now), or -1.
func gapAt(h *Hits, now Time, cfg *Config) int {
	for g, t := range h.ToA {
		if int(h.X[g]) >= cfg.Width || int(h.Y[g]) >= cfg.Height {
			continue
		}
		if t-cfg.Dt > now {
			return g
		}
		now = max(now, t)
	}
	return -1
}
