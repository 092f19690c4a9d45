package pipeline

import (
	"runtime"
	"time"

	"github.com/hitflow/hitflow/internal/cputime"
	"github.com/hitflow/hitflow/pixel"
)

// autoStream is the Auto mode on more than one worker. Whether lanes beat
// the sequential clusterer depends on the data and on what else runs: on
// two cores, end to end, lanes are 1.6 times faster on tracks, where
// clustering is the slow stage, but 1.3 times slower on small clusters,
// where the clusterer keeps up on one core and the lanes' extra work
// takes the core that decoding and writing need (BENCHMARKS.md). So the
// stream times both on the data itself: the sequential clusterer first,
// then lanes, each for autoTrialHits after autoWarmHits, the clock running
// between calls too (the rate the caller's pipeline achieves), and keeps
// lanes only when they are faster by more than a tenth. The trials run
// again every autoRecheckHits (the mode in use first), so that a run
// whose data change (beam spills and the background between them) is not
// held to the first choice, nor to one that the noise of a busy machine
// made.
//
// Lanes spread the clustering over idle cores and add work of their own
// (copies, the repair at the borders, merging). They cannot make a run
// faster when the sequential trial leaves no core idle (the process used
// at least busyShare of every core, as on two cores end to end, where
// decoding, sorting and writing take the second one), nor when the
// clustering is not what bounds it (the clusterer spent less than
// boundShare of the trial in its calls, waiting for its input or its
// output the rest, as behind a Parquet writer). Then their trial is
// skipped: it cost a fifth to a quarter of a 20 M-hit run on gamma rays,
// most of it in memory the lanes take and the batches grown after them
// (BENCHMARKS.md).
//
// The clusterers change hands at a gap in the stream, so the clusters
// are those of either mode alone (see [pixel.Switch]).
type autoStream struct {
	*pixel.Switch

	warm, trial, recheck int64
	clock                func() time.Time
	callClock            func() time.Time     // times the calls of the clusterer in use
	cpu                  func() time.Duration // the process's CPU time so far, or -1 (cputime.Process)
	procs                int                  // the cores the process may use
	phase                autoPhase
	timed                int64         // hits given in this phase
	since                time.Time     // when the timing began, after the warm-up; zero before
	cpuSince             time.Duration // the process's CPU time then
	inside               time.Duration // spent in the clusterer's calls since then
	first                pixel.Mode    // the mode timed first in this trial
	rates                [2]float64    // of the first and the second mode timed

	out pixel.Clusters
}

type autoPhase uint8

const (
	timingFirst autoPhase = iota
	timingSecond
	decided
)

// The trials' lengths: long enough for the buffers to have grown and the
// rates to tell 1.3 times apart, short against a run (a run of 20 M hits
// spends a tenth of them in the slower mode's trial, one of 270 M hits
// between trials 1 %).
const (
	autoWarmHits    = 1 << 19
	autoTrialHits   = 1 << 21
	autoRecheckHits = 1 << 28
)

// busyShare is the share of every core the process must use in the
// sequential trial for the lanes' trial to be skipped. With every core
// busy a share u of the time, the same work spread perfectly would be at
// most 1/u faster. Lanes add a third to the work of clustering (on one
// worker they cluster small clusters at three quarters of the sequential
// rate), which is half the process's work end to end: at most
// 1/(1.17 u) faster, short of the 1.1 times they need to be kept from
// u = 0.78. On two cores end to end the sequential trials used 0.83-0.99.
const busyShare = 0.75

// boundShare is the share of the sequential trial the clusterer must
// spend in its calls for the lanes' trial to be run. A clusterer waiting
// for the other stages a share 1-b of the time bounds the run no more
// than that: made free, it would make the run at most 1/b faster, short
// of the 1.1 times lanes need to be kept below b = 0.91.
const boundShare = 0.9

func newAutoStream(cfg pixel.Config, workers, windowHits int) (*autoStream, error) {
	sw, err := pixel.NewSwitch(cfg, workers, windowHits)
	if err != nil {
		return nil, err
	}
	a := &autoStream{Switch: sw, clock: time.Now, callClock: time.Now, cpu: cputime.Process, procs: runtime.GOMAXPROCS(0),
		warm: autoWarmHits, trial: autoTrialHits, recheck: autoRecheckHits, first: pixel.Sequential}
	a.out.Reset()
	return a, nil
}

func (a *autoStream) Add(h *pixel.Hits) *pixel.Clusters {
	a.out.Reset()
	a.AddTo(&a.out, h)
	return &a.out
}

func (a *autoStream) Flush() *pixel.Clusters {
	a.out.Reset()
	a.FlushTo(&a.out)
	return &a.out
}

func (a *autoStream) AddTo(dst *pixel.Clusters, h *pixel.Hits) {
	if a.Next() != a.Mode() { // a change waits for a gap: nothing is timed
		a.Switch.AddTo(dst, h)
		if a.Next() == a.Mode() {
			a.timed = 0 // changed: the next phase begins
		}
		return
	}
	start := a.callClock()
	a.Switch.AddTo(dst, h)
	a.inside += a.callClock().Sub(start)
	a.time(int64(h.Len()))
}

// time counts n more hits of the phase: at the end of a trial it takes
// the rate and chooses, and once the choice has stood for a.recheck hits,
// it starts the next trial.
func (a *autoStream) time(n int64) {
	a.timed += n
	if a.phase == decided {
		if a.timed >= a.recheck {
			a.phase, a.timed, a.first = timingFirst, 0, a.Mode()
		}
		return
	}
	if a.since.IsZero() { // warming up
		if a.timed >= a.warm {
			a.since, a.cpuSince, a.inside = a.clock(), a.cpu(), 0
			a.timed = a.warm // the hits of this call were before the clock
		}
		return
	}
	if a.timed < a.warm+a.trial {
		return
	}
	wall := a.clock().Sub(a.since)
	a.rates[a.phase] = float64(a.timed-a.warm) / wall.Seconds()
	a.since = time.Time{}
	if a.phase == timingFirst {
		if a.first == pixel.Sequential && a.lanesFutile(wall) {
			a.phase, a.timed = decided, 0
			return
		}
		a.phase = timingSecond
		a.Use(other(a.first))
		return
	}
	a.phase, a.timed = decided, 0
	seqRate, lanesRate := a.rates[timingFirst], a.rates[timingSecond]
	if a.first == pixel.LanesMode {
		seqRate, lanesRate = lanesRate, seqRate
	}
	keep := pixel.Sequential
	if lanesRate > 1.1*seqRate {
		keep = pixel.LanesMode
	}
	a.Use(keep)
}

// lanesFutile reports whether lanes could not have made the trial that
// began wall ago faster: it left no core idle, or the clustering did not
// bound the run.
func (a *autoStream) lanesFutile(wall time.Duration) bool {
	return a.busy(wall) || a.inside.Seconds() < boundShare*wall.Seconds()
}

// busy reports whether the process used at least busyShare of every core
// since the timing began, wall ago.
func (a *autoStream) busy(wall time.Duration) bool {
	if a.cpuSince < 0 { // not known
		return false
	}
	return (a.cpu() - a.cpuSince).Seconds() >= busyShare*float64(a.procs)*wall.Seconds()
}

// other is the mode that is not m.
func other(m pixel.Mode) pixel.Mode {
	if m == pixel.Sequential {
		return pixel.LanesMode
	}
	return pixel.Sequential
}

// NewStream returns a clusterer of the given mode with the given number
// of workers (all cores when < 1), as [pixel.NewStream] does, and for
// Auto the sequential clusterer on one worker; on more, a stream that
// times the sequential clusterer and lanes on its first hits and keeps the
// faster, or keeps the sequential one without trying lanes when it leaves
// no core idle or waits for the caller (see autoStream).
func NewStream(cfg pixel.Config, mode pixel.Mode, workers int) (pixel.Stream, error) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case mode != pixel.Auto:
		return pixel.NewStream(cfg, mode, workers)
	case workers > 1:
		return newAutoStream(cfg, workers, 0)
	}
	return pixel.NewClusterer(cfg)
}

// Chosen returns the mode an Auto stream from NewStream is clustering
// with, the one it settled on once its trials are over (or about to
// change to at the next gap), and Auto for a stream of any other mode. A
// stream shorter than the trials ends in the one it was timing.
func Chosen(s pixel.Stream) pixel.Mode {
	if a, ok := s.(*autoStream); ok {
		return a.Next()
	}
	return pixel.Auto
}
