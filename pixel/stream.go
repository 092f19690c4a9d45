package pixel

import (
	"fmt"
	"runtime"
	"strings"
)

// Mode selects the clustering algorithm; all give the same clusters.
type Mode uint8

// The clustering modes.
const (
	Auto       Mode = iota // the faster of Sequential and LanesMode on the data, chosen by pixel/pipeline
	Sequential             // one goroutine: [Clusterer]
	LanesMode              // data lanes with temporal splitting: [Lanes]
	Chunked                // chunked union-find: [ChunkedClusterer]
)

var modeNames = [...]string{Auto: "auto", Sequential: "sequential", LanesMode: "lanes", Chunked: "chunked"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// ParseMode accepts "auto", "sequential", "lanes" or "chunked".
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if strings.EqualFold(s, name) {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("pixel: unknown clustering mode %q (want auto, sequential, lanes or chunked)", s)
}

// Stream is a streaming clusterer: [Clusterer], [Lanes] or
// [ChunkedClusterer]. Add takes time-ordered hits and returns the clusters
// finished so far (valid until the next call); Flush ends the stream.
// AddTo and FlushTo append the clusters to a batch of the caller's
// instead, which spares a copy when the caller keeps them. Err reports a
// [MemberLimitError] once the stream, keeping members, holds more hits
// than Config.MemberLimit: it goes on clustering, but the caller should
// stop adding hits and flush, or memory grows with the stream. Close
// ends the goroutines of a stream abandoned before its Flush, dropping
// the clusters it holds; a flushed stream has none running.
type Stream interface {
	Add(h *Hits) *Clusters
	Flush() *Clusters
	AddTo(dst *Clusters, h *Hits)
	FlushTo(dst *Clusters)
	KeepMembers(keep bool)
	Stats() Stats
	Err() error
	Close()
}

// chunkedWindow is the lane window standing in for chunks in chunked mode
// for the incremental definitions.
const chunkedWindow = 1 << 14

// NewStream returns a clusterer of the given mode with the given number of
// workers (all cores when < 1). Auto is not a clusterer but a choice
// between two: pixel/pipeline makes it, timing them on the stream.
func NewStream(cfg Config, mode Mode, workers int) (Stream, error) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	switch mode {
	case Sequential:
		return NewClusterer(cfg)
	case LanesMode:
		return NewLanes(cfg, workers, 0)
	case Chunked:
		if cfg.Definition != Local {
			return NewLanes(cfg, workers, chunkedWindow)
		}
		return NewChunkedClusterer(cfg, workers, 0)
	case Auto:
		return nil, fmt.Errorf("pixel: mode auto is chosen by pixel/pipeline.NewStream")
	}
	return nil, fmt.Errorf("pixel: unknown clustering mode %d", mode)
}

// MemberLimitError is what a stream keeping the hits of its clusters
// reports once the clusters it has not yet emitted hold more hits than
// its Config.MemberLimit. Such a cluster's hits stay in memory until it
// ends, and one that never ends (a pixel firing within dt of itself)
// would hold the whole stream. The pixel with the most of the hits held
// names the likely culprit.
type MemberLimitError struct {
	Limit     int // Config.MemberLimit in effect
	X, Y      int // the pixel with the most hits held
	PixelHits int // how many
}

func (e *MemberLimitError) Error() string {
	return fmt.Sprintf("pixel: clusters not yet finished hold more than %d hits, %d of them on pixel (%d, %d): "+
		"with the hits of each cluster kept they stay in memory until their cluster ends, and a pixel firing within dt of itself makes one that never ends",
		e.Limit, e.PixelHits, e.X, e.Y)
}

// pixelCounts counts hits by pixel, to name the busiest in a
// MemberLimitError.
type pixelCounts map[uint32]int

func (p pixelCounts) add(x, y uint16) { p[uint32(x)<<16|uint32(y)]++ }

// memberLimitError names the pixel with the most hits counted (the lowest
// x, then y, of those with as many).
func (p pixelCounts) memberLimitError(limit int) *MemberLimitError {
	best, most := uint32(0), 0
	for k, n := range p {
		if n > most || n == most && k < best {
			best, most = k, n
		}
	}
	return &MemberLimitError{Limit: limit, X: int(best >> 16), Y: int(best & 0xffff), PixelHits: most}
}
