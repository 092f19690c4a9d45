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
	Auto       Mode = iota // the fastest for the machine and the data: see [NewStream]
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
// instead, which spares a copy when the caller keeps them.
type Stream interface {
	Add(h *Hits) *Clusters
	Flush() *Clusters
	AddTo(dst *Clusters, h *Hits)
	FlushTo(dst *Clusters)
	KeepMembers(keep bool)
	Stats() Stats
}

// chunkedWindow is the lane window standing in for chunks in chunked mode
// for the incremental definitions.
const chunkedWindow = 1 << 14

// NewStream returns a clusterer of the given mode with the given number of
// workers (all cores when < 1). Auto is sequential on one worker and lanes
// on more than two cores; on two it decides from the data (see
// [autoStream]).
func NewStream(cfg Config, mode Mode, workers int) (Stream, error) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	if mode == Auto {
		switch {
		case workers == 1:
			mode = Sequential
		case runtime.GOMAXPROCS(0) <= 2:
			return newAutoStream(cfg, workers)
		default:
			mode = LanesMode
		}
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
	}
	return nil, fmt.Errorf("pixel: unknown clustering mode %d", mode)
}

// autoStream picks the mode from the data on a machine of two cores, where
// lanes pay less than they cost for small clusters: their overhead is per
// cluster (each one copied twice more than by the sequential clusterer)
// and per hit, while the clustering they share out is cheap for a sparse
// source (isolated groups), and the reading and writing stages want the
// same two cores. Measured end to end on .tpx3 files (BENCHMARKS.md):
// gamma-like data, 0.41 clusters per hit, goes 1.4 times faster
// sequentially at any rate; pions at 0 degrees (0.14) and everything with
// larger clusters go faster in lanes.
//
// It clusters the first probe hits sequentially, then, unless there were
// more than sparse clusters per hit, goes on in lanes from the first quiet
// gap: a hit more than dt after every earlier one, which nothing before can
// join under any definition. The sequential clusterer is flushed there and
// the lanes take over its position in the stream, so the output is the
// sequential one for a time-ordered stream.
type autoStream struct {
	cfg     Config
	workers int
	probe   int64   // hits clustered before deciding
	sparse  float64 // clusters per hit above which the stream stays sequential
	keep    bool
	stay    bool // decided: sequential to the end
	seq     *Clusterer
	lanes   *Lanes // once switched
}

func newAutoStream(cfg Config, workers int) (*autoStream, error) {
	seq, err := NewClusterer(cfg)
	if err != nil {
		return nil, err
	}
	return &autoStream{cfg: cfg, workers: workers, probe: 1 << 20, sparse: 0.25, seq: seq}, nil
}

func (a *autoStream) Add(h *Hits) *Clusters {
	if a.lanes != nil {
		return a.lanes.Add(h)
	}
	a.seq.out.Reset()
	a.AddTo(&a.seq.out, h)
	return &a.seq.out
}

func (a *autoStream) AddTo(dst *Clusters, h *Hits) {
	if a.lanes != nil {
		a.lanes.AddTo(dst, h)
		return
	}
	st := a.seq.Stats()
	if !a.stay && st.Clustered >= a.probe {
		a.stay = float64(st.Clusters) > a.sparse*float64(st.Clustered)
	}
	g := -1
	if !a.stay && st.Clustered >= a.probe {
		g = a.quietGap(h)
	}
	if g < 0 {
		a.seq.AddTo(dst, h)
		return
	}
	a.seq.AddTo(dst, h.view(0, g))
	a.seq.FlushTo(dst)
	a.lanes, _ = NewLanes(a.cfg, a.workers, 0) // cfg validated in newAutoStream
	a.lanes.KeepMembers(a.keep)
	a.lanes.position = a.seq.position
	a.lanes.AddTo(dst, h.view(g, h.Len()))
}

// quietGap returns the index of the first hit of h inside the sensor more
// than dt after every earlier hit, or -1.
func (a *autoStream) quietGap(h *Hits) int {
	now := a.seq.now
	for i, t := range h.ToA {
		if int(h.X[i]) >= a.cfg.Width || int(h.Y[i]) >= a.cfg.Height {
			continue
		}
		if t-a.cfg.DtMax > now {
			return i
		}
		now = max(now, t)
	}
	return -1
}

func (a *autoStream) Flush() *Clusters {
	if a.lanes != nil {
		return a.lanes.Flush()
	}
	return a.seq.Flush()
}

func (a *autoStream) FlushTo(dst *Clusters) {
	if a.lanes != nil {
		a.lanes.FlushTo(dst)
		return
	}
	a.seq.FlushTo(dst)
}

func (a *autoStream) KeepMembers(keep bool) {
	a.keep = keep
	a.seq.KeepMembers(keep)
}

func (a *autoStream) Stats() Stats {
	if a.lanes != nil {
		return a.lanes.Stats()
	}
	return a.seq.Stats()
}
