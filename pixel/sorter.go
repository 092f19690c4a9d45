package pixel

import (
	"fmt"
	"sort"
)

// Sorter restores the time order of a t-ordered stream: one in which no hit
// is more than Window earlier than a hit before it. A hit is released once
// a hit at least Window later has been seen, so memory holds about Window
// times the hit rate. Hits that break the promise (earlier than a hit
// already released) are released at once, ahead of the sorted ones, and the
// clusterer counts them as late. A hit more than the restart gap earlier
// than the latest one (see [Stats.Restarts]) starts the order afresh:
// everything held is released first, as at the end of the stream.
type Sorter struct {
	window   Time
	restart  Time
	pending  Hits // sorted, not yet released, after the first head
	head     int  // the hits the last call released, still at the front
	merged   Hits
	out      Hits // late hits and the released ones after them
	view     Hits // the released hits, in place, when no late one came
	joined   Hits // the released hits of a batch with a restart
	released Time // time of the latest released hit
	maxSeen  Time
	order    timeSort
}

// NewSorter returns a sorter for streams that are window-ordered, which
// restarts at a hit more than restart earlier than the latest (0 means
// [DefaultRestart]). The restart gap must exceed the window.
func NewSorter(window, restart Time) (*Sorter, error) {
	restart = Config{Restart: restart}.RestartGap()
	if window < 0 || restart <= window {
		return nil, fmt.Errorf("pixel: reorder window %v ns must be between 0 and the restart gap %v ns", window.Ns(), restart.Ns())
	}
	s := &Sorter{window: window, restart: restart}
	s.reset()
	return s, nil
}

// reset forgets the times seen, for a new stream.
func (s *Sorter) reset() { s.released, s.maxSeen = -1<<63, -1<<63 }

// Push adds a batch and returns the hits that can be released, valid until
// the next call.
func (s *Sorter) Push(h *Hits) *Hits {
	released, end := s.push(h)
	if end == h.Len() {
		return released
	}
	s.joined.Reset()
	for {
		s.joined.AppendRange(released, 0, released.Len())
		released = s.Flush()
		s.joined.AppendRange(released, 0, released.Len())
		s.reset()
		h = h.view(end, h.Len())
		if released, end = s.push(h); end == h.Len() {
			s.joined.AppendRange(released, 0, released.Len())
			return &s.joined
		}
	}
}

// push takes the hits of h up to the first that restarts the stream and
// returns the hits that can be released and where it stopped.
func (s *Sorter) push(h *Hits) (*Hits, int) {
	s.drop()
	s.out.Reset()
	onTime := 0
	for i, t := range h.ToA {
		if clockReset(s.maxSeen, t, s.restart) {
			h = h.view(0, i)
			break
		}
		s.maxSeen = max(s.maxSeen, t)
		if t < s.released {
			s.out.AppendFrom(h, i)
		} else {
			onTime++
		}
	}
	var perm []int32 // nil: h is in order as it is
	if onTime != h.Len() || !isSorted(h.ToA) {
		perm = s.order.sortByTime(h.ToA)
		if onTime != h.Len() { // drop the late hits, already released
			k := 0
			for _, i := range perm {
				if h.ToA[i] >= s.released {
					perm[k] = i
					k++
				}
			}
			perm = perm[:k]
		}
	}
	s.merge(sortedView{h, perm})
	return s.release(s.maxSeen - s.window), h.Len()
}

// Flush releases everything still held.
func (s *Sorter) Flush() *Hits {
	s.drop()
	s.out.Reset()
	return s.release(1<<63 - 1)
}

// sortedView is a batch in time order: the hits of h at the indices perm,
// or all of h as it is when perm is nil. The batch is merged straight from
// it, with no sorted copy made first.
type sortedView struct {
	h    *Hits
	perm []int32
}

func (v sortedView) Len() int {
	if v.perm == nil {
		return v.h.Len()
	}
	return len(v.perm)
}

// toa is the time of the view's hit j.
func (v sortedView) toa(j int) Time {
	if v.perm == nil {
		return v.h.ToA[j]
	}
	return v.h.ToA[v.perm[j]]
}

// appendTo appends the view's hits [i, j) to dst.
func (v sortedView) appendTo(dst *Hits, i, j int) {
	if v.perm == nil {
		dst.AppendRange(v.h, i, j)
	} else {
		dst.gather(v.h, v.perm[i:j])
	}
}

// merge merges the sorted batch b into pending; equal times keep the
// pending hits first.
func (s *Sorter) merge(b sortedView) {
	p := &s.pending
	if p.Len() == 0 || b.Len() == 0 || p.ToA[p.Len()-1] <= b.toa(0) {
		b.appendTo(p, 0, b.Len())
		return
	}
	m := &s.merged
	m.Reset()
	m.Reserve(p.Len() + b.Len())
	i, j := 0, 0
	for i < p.Len() && j < b.Len() {
		// Copy the longest run from one side at a time.
		if p.ToA[i] <= b.toa(j) {
			k := i + 1
			for k < p.Len() && p.ToA[k] <= b.toa(j) {
				k++
			}
			m.AppendRange(p, i, k)
			i = k
		} else {
			k := j + 1
			for k < b.Len() && b.toa(k) < p.ToA[i] {
				k++
			}
			b.appendTo(m, j, k)
			j = k
		}
	}
	m.AppendRange(p, i, p.Len())
	b.appendTo(m, j, b.Len())
	s.pending, s.merged = s.merged, s.pending
}

// release returns the pending hits with time <= limit, after the late
// hits in s.out if there are any; else in place, as a view of the front of
// pending that the next call drops.
func (s *Sorter) release(limit Time) *Hits {
	p := &s.pending
	k := sort.Search(p.Len(), func(i int) bool { return p.ToA[i] > limit })
	if k > 0 {
		s.released = p.ToA[k-1]
	}
	s.head = k
	if s.out.Len() > 0 {
		s.out.AppendRange(p, 0, k)
		return &s.out
	}
	// Capped, so that appending to the view cannot write over pending.
	s.view = Hits{X: p.X[:k:k], Y: p.Y[:k:k], ToA: p.ToA[:k:k], ToT: p.ToT[:k:k]}
	if p.Calibrated() {
		s.view.E = p.E[:k:k]
	}
	return &s.view
}

// drop removes the hits the last call released from the front of pending,
// copying the rest (about a window's worth of hits) there.
func (s *Sorter) drop() {
	k := s.head
	if k == 0 {
		return
	}
	p := &s.pending
	n := copy(p.X, p.X[k:])
	copy(p.Y, p.Y[k:])
	copy(p.ToA, p.ToA[k:])
	copy(p.ToT, p.ToT[k:])
	p.X, p.Y, p.ToA, p.ToT = p.X[:n], p.Y[:n], p.ToA[:n], p.ToT[:n]
	if len(p.E) != 0 {
		copy(p.E, p.E[k:])
		p.E = p.E[:n]
	}
	s.head = 0
	s.view = Hits{}
}

func isSorted(t []Time) bool {
	for i := 1; i < len(t); i++ {
		if t[i] < t[i-1] {
			return false
		}
	}
	return true
}
