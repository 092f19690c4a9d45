package pixel

import "errors"

// Checkpoint is where a stream's clustering stands between two batches,
// for a stream that stops in one process and goes on in another (a
// detector's Kafka partition moving to another member of a group): the
// hits of the clusters not yet emitted, and the clusterer's position.
// The clusters emitted before it and those emitted after a Resume are
// then those of the stream clustered in one go: a cluster's hits are all
// in it or none, since an emitted cluster is closed to later hits. That
// holds for a stream in time order, as a Sorter makes it. A late hit
// (Stats.Late: later than the sorter's window) is the exception: it never
// takes a pixel of the matrix from a later hit, and after a Resume the
// emitted hits no longer hold theirs, so the hits after it may join it
// where, without the checkpoint, they would not have.
type Checkpoint struct {
	Open   Hits  // in arrival order
	Now    Time  // the latest time seen
	NextID int64 // the id of the next cluster
	Stats  Stats
}

// errFolded is Checkpoint's refusal without the open hits kept.
var errFolded = errors.New("pixel: a checkpoint needs the hits of the open clusters: keep them (KeepOpenHits or KeepMembers)")

// Checkpoint sets cp to the clusterer's open hits and position. The
// clusterer must keep them whole (KeepOpenHits, or KeepMembers), without
// which a long cluster's hits are folded into sums and lost.
func (c *Clusterer) Checkpoint(cp *Checkpoint) error {
	if !c.keepOpen && !c.keepMembers {
		return errFolded
	}
	cp.Open.Reset()
	for i := c.front; i < len(c.nodes); i++ {
		nd := &c.nodes[i]
		if nd.parent == dead {
			continue
		}
		cp.Open.Append(nd.x, nd.y, nd.toa, nd.tot)
		if c.calibrated {
			cp.Open.E = append(cp.Open.E, c.e[i])
		}
	}
	cp.Now, cp.NextID, cp.Stats = c.now, c.nextID, c.stats
	return nil
}

// Resume makes a new clusterer go on from cp, appending to out the
// clusters among the open hits that are already closed. The stream's
// next batch then follows.
func (c *Clusterer) Resume(cp *Checkpoint, out *Clusters) error {
	if c.stats.Hits != 0 || len(c.nodes) != 0 {
		return errors.New("pixel: only a new clusterer resumes from a checkpoint")
	}
	c.nextID = cp.NextID
	c.AddTo(out, &cp.Open)
	// The open hits were counted when they came, late ones included.
	st := cp.Stats
	st.Clusters = c.nextID
	c.stats = st
	c.now = max(c.now, cp.Now)
	return nil
}

// Checkpoint appends the hits the sorter holds (in time order) to pending
// and returns the time of the latest hit released and of the latest seen:
// what a new sorter needs to go on (Resume).
func (s *Sorter) Checkpoint(pending *Hits) (released, maxSeen Time) {
	pending.AppendRange(&s.pending, 0, s.pending.Len())
	return s.released, s.maxSeen
}

// Resume makes a new sorter go on from a checkpoint of another with the
// same window.
func (s *Sorter) Resume(pending *Hits, released, maxSeen Time) {
	s.pending.Reset()
	s.pending.AppendRange(pending, 0, pending.Len())
	s.released, s.maxSeen = released, maxSeen
}
