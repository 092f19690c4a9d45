package pixel

import "math"

// A ChunkJob is the chunk step of one buffer of a [ChunkedClusterer], as it
// asks a [ChunkLabeler] to do it: label every chunk's hits and, when asked,
// also summarise the clusters that stay within their chunk, so that only
// the few that may reach past it come back to the host as hits.
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
	// of its chunk k, or is one of the first Carried hits of the buffer, or
	// when its last hit comes more than Span hits after its first.
	Summarise  bool
	Start, End []Time
	Carried    int
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

// takeSums fills chunk k's finished clusters and border hits from what
// the labeler summarised, as chunkTask would have from the hits.
func (c *ChunkedClusterer) takeSums(k int, job *ChunkJob, closedAt, openAt int) {
	cw := &c.chunks[k]
	cw.border = append(cw.border[:0], job.OpenHits[openAt:openAt+int(job.Open[k])]...)
	out := &cw.out
	out.Reset()
	out.Calibrated = c.calibrated
	n := int(job.Closed[k])
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
		root := c.seq[r[SumRoot]]
		key := outputKey(root, c.seq[r[SumLastHit]], span)
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
