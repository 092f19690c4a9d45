package pixel

// Clusters is a batch of finished clusters as structure of arrays, in the
// order they were emitted (by first ToA). Weighted quantities use the
// energy when the hits were calibrated and the ToT otherwise.
type Clusters struct {
	ID         []int64   // running number from 0 in emission order
	Size       []int32   // hits
	FirstToA   []Time    // earliest hit
	LastToA    []Time    // latest hit; the span is LastToA - FirstToA
	ToTSum     []int64   // sum of ToT in 25 ns ticks
	ESum       []float64 // sum of energies in keV (zero when uncalibrated)
	X, Y       []float64 // weighted centroid in pixels
	XMin, XMax []uint16  // bounding box, inclusive
	YMin, YMax []uint16
	Max        []float64 // largest pixel value (energy or ToT)
	Calibrated bool      // ESum, X, Y and Max come from energies

	// Members holds the hits of every cluster when the clusterer keeps them
	// (see [Clusterer.KeepMembers]): cluster i owns Members[Start[i]:Start[i+1]],
	// in time order.
	Members Hits
	Start   []int
}

// Len returns the number of clusters.
func (c *Clusters) Len() int { return len(c.ID) }

// Reset empties the batch, keeping its storage.
func (c *Clusters) Reset() {
	c.ID, c.Size, c.FirstToA, c.LastToA = c.ID[:0], c.Size[:0], c.FirstToA[:0], c.LastToA[:0]
	c.ToTSum, c.ESum, c.X, c.Y = c.ToTSum[:0], c.ESum[:0], c.X[:0], c.Y[:0]
	c.XMin, c.XMax, c.YMin, c.YMax = c.XMin[:0], c.XMax[:0], c.YMin[:0], c.YMax[:0]
	c.Max = c.Max[:0]
	c.Members.Reset()
	c.Start = append(c.Start[:0], 0)
}

// clusterSummary accumulates the features of one cluster hit by hit.
type clusterSummary struct {
	size        int32
	first, last Time
	totSum      int64
	eSum        float64
	wSum        float64 // sum of weights (energy or ToT)
	wx, wy      float64
	sx, sy      float64 // unweighted sums, for clusters without weight
	xmin, xmax  uint16
	ymin, ymax  uint16
	max         float64
}

func (s *clusterSummary) reset() {
	*s = clusterSummary{first: 1<<63 - 1, last: -1 << 63, xmin: 0xffff, ymin: 0xffff, max: -1}
}

func (s *clusterSummary) add(x, y uint16, t Time, tot uint16, e float32, calibrated bool) {
	s.size++
	s.first = min(s.first, t)
	s.last = max(s.last, t)
	s.totSum += int64(tot)
	w := float64(tot)
	if calibrated {
		w = float64(e)
		s.eSum += w
	}
	s.wSum += w
	s.wx += w * float64(x)
	s.wy += w * float64(y)
	s.sx += float64(x)
	s.sy += float64(y)
	s.xmin, s.xmax = min(s.xmin, x), max(s.xmax, x)
	s.ymin, s.ymax = min(s.ymin, y), max(s.ymax, y)
	s.max = max(s.max, w)
}

// append adds the finished summary as the next cluster. A cluster without
// positive total weight gets its unweighted centroid.
func (c *Clusters) append(id int64, s *clusterSummary) {
	cx, cy := s.sx/float64(s.size), s.sy/float64(s.size)
	if s.wSum > 0 {
		cx, cy = s.wx/s.wSum, s.wy/s.wSum
	}
	c.ID = append(c.ID, id)
	c.Size = append(c.Size, s.size)
	c.FirstToA = append(c.FirstToA, s.first)
	c.LastToA = append(c.LastToA, s.last)
	c.ToTSum = append(c.ToTSum, s.totSum)
	c.ESum = append(c.ESum, s.eSum)
	c.X = append(c.X, cx)
	c.Y = append(c.Y, cy)
	c.XMin = append(c.XMin, s.xmin)
	c.XMax = append(c.XMax, s.xmax)
	c.YMin = append(c.YMin, s.ymin)
	c.YMax = append(c.YMax, s.ymax)
	c.Max = append(c.Max, s.max)
}
