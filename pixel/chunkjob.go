package pixel

import "math"

// A ChunkJob is the chunk step of one buffer of a [ChunkedClusterer], as it
// asks a [ChunkLabeler] to do it: label every chunk's hits and, when asked,
// also summarise the clusters that stay within their chunk, so that only
// the few that may reach past it come back to the host as hits. The hits
// are a buffer's new ones: those carried in from the buffer before, known
// only once the host has finished it, are the host's to label.
type ChunkJob struct {
	Hits   *Hits  // time-ordered
	Bounds []int  // chunk k is hits [Bounds[k], Bounds[k+1])
	Config Config // the sensor and dt
	// Parent receives, for every hit, the earliest hit of its cluster
	// within its chunk (see [ChunkLabeler]).
	Parent []int32

	// Summarise asks for the closed clusters' sums too. A cluster is open
	// (it may reach past its chunk, or its sums are the host's to finish)
	// when one of its hits lies at or before Start[k] or at or after End[k]
	// of its chunk k, or when its last hit comes more than Span hits after
	// its first.
	Summarise  bool
	Start, End []Time
	Span       int64

	// What a labeler that summarised sets: Summarised, and for each chunk
	// k, Closed[k] closed clusters whose records (SumFields int64s each,
	// or SumFieldsCalibrated for calibrated hits; see [SumRoot]) follow
	// those of the chunks before it in Sums, in order of their first hits,
	// and Open[k] hits of open clusters, in order, following those of the
	// chunks before it in OpenHits.
	Summarised   bool
	Closed, Open []int32
	Sums         []int64
	OpenHits     []int32
}

// The fields of a closed cluster's record in ChunkJob.Sums: the indices of
// its first and last hits in the buffer, its size, first and last ToA, its
// ToT sum, ToT-weighted and plain sums of x and of y, its box (xmin, xmax,
// ymin and ymax, 16 bits each from the lowest), its highest ToT; with
// calibrated hits then its energy sums in units of 2^-40 keV of e, e*x and
// e*y (128-bit integers, the high half first) and the bits of its highest
// energy as a float32, each energy clamped to ±[MaxEnergy] and NaN taken
// as 0.
const (
	SumRoot = iota
	SumLastHit
	SumSize
	SumFirst
	SumLast
	SumToT
	SumToTX
	SumToTY
	SumX
	SumY
	SumBox
	SumPeak
	SumEnergy                     // the high half of e; then its low half, e*x's halves, e*y's
	SumPeakEnergy = SumEnergy + 6 // float32 bits
)

// The int64s of a record, without and with calibration.
const (
	SumFields           = SumEnergy
	SumFieldsCalibrated = SumPeakEnergy + 1
)

// advance labels the next buffer's new hits on the labeler while the
// workers finish the buffer before, and then appends them to the hits that
// buffer carried, for the workers to finish with the next call: the
// device and the host's cores work at the same time, at the cost of a
// buffer's delay. final: the stream ends with them.
func (c *ChunkedClusterer) advance(final bool) {
	job := c.nextJob(final)
	done := make(chan error, 1)
	go func() { done <- c.labeler.Label(job) }()
	if c.assembled {
		c.finish(false)
	}
	c.assemble(job, <-done)
	if final {
		c.finish(true)
	}
}

// nextJob is the labeler's job for the next buffer's new hits. The sums
// are asked for unless the clusters keep their members (which the host
// gathers), and only when the hits carry energies exactly when the
// clusters do (the records' layout follows the hits). The hits carried
// in will come before the first chunk: a border.
func (c *ChunkedClusterer) nextJob(final bool) *ChunkJob {
	c.nextNow, c.nextLate = c.now, c.stats.Late
	toa := c.next.ToA
	c.nextBounds = c.cut(toa, c.nextBounds)
	c.nextParent = growLen(c.nextParent, len(toa))
	j := &c.job
	j.Hits, j.Bounds, j.Config, j.Parent = &c.next, c.nextBounds, c.cfg, c.nextParent
	j.Summarised = false
	j.Summarise = !c.keep && c.next.Calibrated() == c.calibrated
	if !j.Summarise {
		return j
	}
	j.Start, j.End = j.Start[:0], j.End[:0]
	for k := range len(c.nextBounds) - 1 {
		start, end := c.reach(toa, c.nextBounds, c.nextLate, k, final, true)
		j.Start, j.End = append(j.Start, start), append(j.End, end)
	}
	j.Span = c.cfg.span()
	return j
}

// assemble appends the next buffer's new hits to the hits carried in buf,
// which the workers are to label as chunks of their own, with the roots
// the labeler found for the others (none if err), and takes its sums.
func (c *ChunkedClusterer) assemble(job *ChunkJob, err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
	carried, fresh := c.buf.Len(), c.next.Len()
	c.bounds = c.bounds[:0]
	if carried > 0 {
		c.bounds = c.cut(c.buf.ToA, c.bounds)
		c.bounds = c.bounds[:len(c.bounds)-1] // the new hits' first bound ends them
	}
	c.hostChunks = len(c.bounds)
	for _, b := range c.nextBounds {
		c.bounds = append(c.bounds, carried+b)
	}
	c.labeled = err == nil
	c.summed = c.labeled && job.Summarised
	c.buf.lengthen(fresh, c.next.Calibrated())
	c.seq = growLen(c.seq, carried+fresh)
	c.parent = growLen(c.parent, carried+fresh)
	// A buffer of a device holds millions of hits: copied in parts.
	const part = 1 << 16
	shift := int32(carried)
	c.parallel((fresh+part-1)/part, func(_, p int) {
		lo, hi := p*part, min(fresh, (p+1)*part)
		c.buf.copyAt(carried+lo, &c.next, lo, hi)
		for i := lo; i < hi; i++ {
			c.seq[carried+i] = c.nextFirst + int64(i)
		}
		if c.labeled {
			for i := lo; i < hi; i++ {
				c.parent[carried+i] = job.Parent[i] + shift
			}
		}
	})
	c.bufNow, c.bufLate = c.nextNow, c.nextLate
	c.next.Reset()
	c.assembled = true
	if c.summed {
		c.takeAllSums(job)
	}
}

// takeAllSums takes every labelled chunk's clusters from the labeler's
// sums, on the workers.
func (c *ChunkedClusterer) takeAllSums(job *ChunkJob) {
	chunks := len(job.Bounds) - 1
	c.chunkSpace(c.hostChunks + chunks)
	at := growLen(c.sumsAt, 2*chunks)
	c.sumsAt = at
	closedAt, openAt := 0, 0
	for k := range chunks {
		at[2*k], at[2*k+1] = closedAt, openAt
		closedAt += int(job.Closed[k])
		openAt += int(job.Open[k])
	}
	shift := int32(c.bounds[c.hostChunks])
	c.parallel(chunks, func(_, k int) {
		c.takeSums(c.hostChunks+k, job, k, at[2*k], at[2*k+1], shift)
	})
}

// takeSums fills chunk k's finished clusters and border hits from what
// the labeler summarised for its chunk d, whose hits' indices are shift
// less than in the buffer, as chunkTask would have from the hits.
func (c *ChunkedClusterer) takeSums(k int, job *ChunkJob, d, closedAt, openAt int, shift int32) {
	cw := &c.chunks[k]
	cw.border = cw.border[:0]
	for _, i := range job.OpenHits[openAt : openAt+int(job.Open[d])] {
		cw.border = append(cw.border, i+shift)
	}
	out := &cw.out
	out.Reset()
	out.Calibrated = c.calibrated
	n := int(job.Closed[d])
	out.extend(n)
	fields := SumFields
	if c.calibrated {
		fields = SumFieldsCalibrated
	}
	span := c.cfg.span()
	for m := range n {
		r := job.Sums[(closedAt+m)*fields:][:fields]
		box := uint64(r[SumBox])
		s := hitSums{
			size: int32(r[SumSize]), first: Time(r[SumFirst]), last: Time(r[SumLast]),
			tot: r[SumToT], tx: r[SumToTX], ty: r[SumToTY], sx: r[SumX], sy: r[SumY],
			xmin: uint16(box), xmax: uint16(box >> 16), ymin: uint16(box >> 32), ymax: uint16(box >> 48),
			peak: uint16(r[SumPeak]),
		}
		root := c.seq[r[SumRoot]+int64(shift)]
		key := outputKey(root, c.seq[r[SumLastHit]+int64(shift)], span)
		if !c.calibrated {
			out.store(m, root, key, &s, nil)
			continue
		}
		e := r[SumEnergy:]
		es := energySums{
			e:    wide{e[0], uint64(e[1])},
			ex:   wide{e[2], uint64(e[3])},
			ey:   wide{e[4], uint64(e[5])},
			peak: float64(math.Float32frombits(uint32(e[6]))),
		}
		out.store(m, root, key, &s, &es)
	}
}
