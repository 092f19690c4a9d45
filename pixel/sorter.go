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
	pending  Hits // sorted, not yet released
	merged   Hits // the next pending, being merged
	out      Hits // Push's and Flush's release
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

// KeySorter sorts the keys of a [Sorter]'s large batches on an
// accelerator: package pixel/pixelcl's Sorter is one, on an OpenCL
// device. The Sorter makes the keys and merges and gathers the hits as
// without it, so the order is the same.
type KeySorter interface {
	// SortKeys sorts keys, each a time offset of bits bits above the
	// index of its hit in the batch (the from bits below, the keys in the
	// order of their indices), by offset, stably, and writes their
	// indices in that order to perm, of the keys' length.
	SortKeys(keys []uint64, from, bits uint, perm []int32) error
	// MinKeys is the fewest keys worth the device's transfers and
	// launches; smaller batches are sorted on the host.
	MinKeys() int
}

// SetKeySorter makes k sort the batches that are not nearly in order and
// hold at least k.MinKeys hits (nil: the host sorts all). Its order is
// checked before any hit moves; a failure of k, or an order that is not
// the times', is reported by Err, and from that batch on the host sorts,
// so that nothing is lost or misplaced.
func (s *Sorter) SetKeySorter(k KeySorter) { s.order.dev, s.order.devErr = k, nil }

// Err returns the key sorter's first failure (see SetKeySorter).
func (s *Sorter) Err() error { return s.order.devErr }

// DeviceBatches is the number of batches the key sorter sorted.
func (s *Sorter) DeviceBatches() int { return s.order.devBatches }

// reset forgets the times seen, for a new stream.
func (s *Sorter) reset() { s.released, s.maxSeen = -1<<63, -1<<63 }

// Push adds a batch and returns the hits that can be released, valid until
// the next call.
func (s *Sorter) Push(h *Hits) *Hits {
	s.out.Reset()
	s.PushTo(&s.out, h)
	return &s.out
}

// PushTo is Push appending the released hits to dst, for a caller that
// keeps them: it saves a copy of every hit.
func (s *Sorter) PushTo(dst, h *Hits) {
	for {
		end := s.push(dst, h)
		if end == h.Len() {
			return
		}
		s.FlushTo(dst)
		s.reset()
		h = h.view(end, h.Len())
	}
}

// push takes the hits of h up to the first that restarts the stream,
// appends those that can be released to dst and returns where it stopped.
func (s *Sorter) push(dst, h *Hits) int {
	if h.Len() == 0 {
		return 0
	}
	onTime := 0
	t0 := h.ToA[0]
	r := startRange(t0)
	for i, t := range h.ToA {
		if clockReset(s.maxSeen, t, s.restart) {
			h = h.view(0, i)
			break
		}
		r.add(t, t0)
		s.maxSeen = max(s.maxSeen, t)
		if t < s.released {
			dst.AppendFrom(h, i)
		} else {
			onTime++
		}
	}
	var perm []int32 // nil: h is in order as it is
	if onTime != h.Len() || r.behind > 0 {
		perm = s.order.sortByTime(h.ToA, r)
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
	s.release(dst, sortedView{*h, perm}, s.maxSeen-s.window)
	return h.Len()
}

// Flush releases everything still held.
func (s *Sorter) Flush() *Hits {
	s.out.Reset()
	s.FlushTo(&s.out)
	return &s.out
}

// FlushTo is Flush appending the hits to dst.
func (s *Sorter) FlushTo(dst *Hits) { s.release(dst, sortedView{}, 1<<63-1) }

// sortedView is a batch in time order: the hits of h at the indices perm,
// or all of h as it is when perm is nil. The batch is merged straight from
// it, with no sorted copy made first.
type sortedView struct {
	h    Hits
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

// slice is the view of the hits [i, j) of v.
func (v sortedView) slice(i, j int) sortedView {
	if v.perm == nil {
		return sortedView{h: *v.h.view(i, j)}
	}
	return sortedView{v.h, v.perm[i:j]}
}

// appendTo appends the view's hits [i, j) to dst.
func (v sortedView) appendTo(dst *Hits, i, j int) {
	if v.perm == nil {
		dst.AppendRange(&v.h, i, j)
	} else {
		dst.gather(&v.h, v.perm[i:j])
	}
}

// release merges the sorted batch b with the pending hits, appends those
// with time <= limit to dst and keeps the rest pending. Equal times keep
// the pending hits first.
func (s *Sorter) release(dst *Hits, b sortedView, limit Time) {
	p := &s.pending
	i := sort.Search(p.Len(), func(i int) bool { return p.ToA[i] > limit })
	j := sort.Search(b.Len(), func(j int) bool { return b.toa(j) > limit })
	mergeTo(dst, p.view(0, i), b.slice(0, j))
	if i+j > 0 {
		s.released = dst.ToA[dst.Len()-1]
	}
	s.merged.Reset()
	mergeTo(&s.merged, p.view(i, p.Len()), b.slice(j, b.Len()))
	s.pending, s.merged = s.merged, s.pending
}

// mergeTo appends the merge of the sorted hits p and the sorted batch b
// to dst, p first where times are equal.
func mergeTo(dst, p *Hits, b sortedView) {
	if p.Len() == 0 || b.Len() == 0 || p.ToA[p.Len()-1] <= b.toa(0) {
		dst.AppendRange(p, 0, p.Len())
		b.appendTo(dst, 0, b.Len())
		return
	}
	dst.Reserve(p.Len() + b.Len())
	i, j := 0, 0
	for i < p.Len() && j < b.Len() {
		// Copy the longest run from one side at a time.
		if p.ToA[i] <= b.toa(j) {
			k := i + 1
			for k < p.Len() && p.ToA[k] <= b.toa(j) {
				k++
			}
			dst.AppendRange(p, i, k)
			i = k
		} else {
			k := j + 1
			for k < b.Len() && b.toa(k) < p.ToA[i] {
				k++
			}
			b.appendTo(dst, j, k)
			j = k
		}
	}
	dst.AppendRange(p, i, p.Len())
	b.appendTo(dst, j, b.Len())
}
