package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// Source is one input stream.
type Source struct {
	Name string
	R    io.Reader
	Size int64 // bytes, for progress; 0 if unknown
	// Arrived, for a live source, is when its byte at offset arrived
	// (offsets asked for do not decrease); the run then stamps each batch
	// with its oldest byte's arrival, for Job.Written.
	Arrived func(offset int64) time.Time
}

// ClusterSink receives finished clusters in order.
type ClusterSink interface {
	Write(c *pixel.Clusters) error
	NeedsMembers() bool
}

// HitSink receives the hits of each cluster with the cluster's id.
type HitSink interface {
	WriteMembers(c *pixel.Clusters) error
}

// Job describes one run. The sources are one stream, in order.
type Job struct {
	Sources     []Source
	Reader      tpx3.Options
	Calibration *tpx3.Calibration // nil: uncalibrated
	Mask        *pixel.Mask       // nil: every pixel is clustered
	Unsorted    pixel.Time        // reorder window; 0 trusts the input order
	Cluster     pixel.Config
	Mode        pixel.Mode // clustering algorithm; all give the same clusters
	Workers     int        // clustering goroutines; 0 means all cores
	// Labeler, when set, does the chunk step of mode Chunked on an
	// accelerator (pixel/pixelcl); the local definition only.
	Labeler pixel.ChunkLabeler
	// KeySorter, when set, does the radix sorts of the reorder stage on
	// an accelerator (pixel/pixelcl), any mode.
	KeySorter pixel.KeySorter
	Clusters  ClusterSink
	Hits      HitSink                // optional
	TDC       func([]tpx3.TDC) error // optional
	Progress  func(bytesDone int64)  // optional, called after each batch
	// Flush, when positive, is how often the writing stage flushes the
	// sinks that can be (a Flush method): a live run's clusters leave
	// within it, rather than when a buffer fills.
	Flush time.Duration
	// Written, when set, is called from the writing stage for each batch
	// of clusters once it is out (flushed, with Flush), with the arrival
	// of the oldest byte of the input batch whose hits closed them (zero
	// for sources without Arrived).
	Written func(clusters int, arrived time.Time)
	// Counters, when set, are kept up to date as the batches pass, for
	// monitoring a run while it goes.
	Counters *Counters
	// Filter, when set, chooses the clusters written: it gets every batch
	// and returns those to write, in a batch valid until its next call
	// (it may add columns). Called from the writing stage. FilterHits
	// says it needs the clusters' hits.
	Filter     func(*pixel.Clusters) (*pixel.Clusters, error)
	FilterHits bool
	// Correction, when set, changes the hits' times after calibration and
	// before sorting (a time-walk correction); the reorder window grows
	// by its spread.
	Correction Correction
}

// Correction changes hits' times.
type Correction interface {
	Correct(*pixel.Hits)
	// Spread is the most it moves one hit's time against another's.
	Spread() pixel.Time
}

// window is the reorder window of the job's hits as they reach sorting.
func (j Job) window() pixel.Time {
	if j.Correction == nil {
		return j.Unsorted
	}
	return j.Unsorted + j.Correction.Spread()
}

// Counters follow a run while it goes; each stage updates its own.
type Counters struct {
	Bytes      atomic.Int64 // read
	Hits       atomic.Int64 // decoded, the out of range ones included
	OutOfRange atomic.Int64 // of the decoder and of the clusterer (each adds its own)
	Late       atomic.Int64
	Invalid    atomic.Int64 // hits without a valid energy (calibrated runs)
	Clusters   atomic.Int64 // written
}

// hitBatch is a batch of hits with the arrival of its oldest byte.
type hitBatch struct {
	pixel.Hits
	arrived time.Time
}

// clusterBatch is a batch of clusters with the arrival of the oldest
// byte of the hit batch that closed them.
type clusterBatch struct {
	pixel.Clusters
	arrived time.Time
}

// Validate reports a job that cannot run: no clusters sink, a negative
// reorder window or worker count, an unknown mode or a configuration the
// clusterer refuses.
func (j Job) Validate() error {
	switch {
	case j.Clusters == nil:
		return errors.New("pipeline: the job has no clusters sink")
	case j.Unsorted < 0:
		return fmt.Errorf("pipeline: negative reorder window %v ns", j.Unsorted.Ns())
	case j.Workers < 0:
		return fmt.Errorf("pipeline: %d workers: must not be negative", j.Workers)
	case j.Mode > pixel.Chunked:
		return fmt.Errorf("pipeline: unknown clustering mode %d", j.Mode)
	case j.Labeler != nil && j.Mode != pixel.Chunked:
		return fmt.Errorf("pipeline: a device clusters in mode chunked, not %v", j.Mode)
	case j.Labeler != nil && j.Cluster.Definition != pixel.Local:
		return fmt.Errorf("pipeline: a device clusters the local definition; the %v definition runs on the CPU cores", j.Cluster.Definition)
	}
	if err := j.Cluster.Validate(); err != nil {
		return err
	}
	if w := j.window(); w >= j.Cluster.RestartGap() {
		return fmt.Errorf("pipeline: a reorder window of %v ns (with the correction's spread) must be shorter than the restart gap, %v ns", w.Ns(), j.Cluster.RestartGap().Ns())
	}
	return nil
}

// Summary counts what a run did.
type Summary struct {
	Files         int // sources read, the live ones included
	Streams       int // of them, live sources (Source.Arrived set)
	Bytes         int64
	Hits          int64  // pixel hits decoded, the out of range ones included
	OutOfRange    int64  // hits outside the layout or sensor, not clustered
	Masked        int64  // hits on masked pixels, not clustered
	MaskedPixels  int    // pixels in the job's mask
	Late          int64  // hits later than the reorder window allowed
	Restarts      int64  // times the clock went back by more than the restart gap
	InvalidEnergy int64  // hits without a valid energy (calibrated runs)
	OutsideCalib  int64  // of them, the hits beyond the calibration's matrix
	CalibSize     string // the matrix's, "256x256"
	Clusters      int64
	TDC           int64
	Control       int64
	Unknown       int64 // raw packets of unknown type
	Elapsed       time.Duration
	Chosen        pixel.Mode // the mode auto ended with (see [Chosen])
	Device        string     // where the chunk step ran, with a Labeler that says (a Where method)
	SortedOn      string     // where the reorder stage's radix sorts ran, with a KeySorter that says (a Where method)
	DeviceSorts   int        // the batches sorted there
}

// String is the one-line summary printed at the end of a run.
func (s Summary) String() string {
	rate := 0.0
	if s.Elapsed > 0 {
		rate = float64(s.Hits) / s.Elapsed.Seconds() / 1e6
	}
	how := ""
	if s.Chosen != pixel.Auto {
		how = fmt.Sprintf(", auto: %v", s.Chosen)
	}
	var sources []string
	if n := s.Files - s.Streams; n > 0 || s.Streams == 0 {
		sources = append(sources, count(n, "file"))
	}
	if s.Streams > 0 {
		sources = append(sources, count(s.Streams, "stream"))
	}
	line := fmt.Sprintf("hits read %d, clusters %d, late hits %d, invalid hits %d, out of range %d, %.1f Mhit/s (%s, %.3f s%s)",
		s.Hits, s.Clusters, s.Late, s.InvalidEnergy, s.OutOfRange, rate, strings.Join(sources, ", "), s.Elapsed.Seconds(), how)
	if s.OutsideCalib > 0 {
		line += fmt.Sprintf(", %d invalid hits beyond the %s calibration", s.OutsideCalib, s.CalibSize)
	}
	if s.MaskedPixels > 0 {
		line += fmt.Sprintf(", masked %d hits on %d pixels", s.Masked, s.MaskedPixels)
	}
	if s.Restarts > 0 {
		line += fmt.Sprintf(", time restarts %d", s.Restarts)
	}
	if s.TDC > 0 || s.Unknown > 0 {
		line += fmt.Sprintf(", TDC %d, unknown packets %d", s.TDC, s.Unknown)
	}
	if s.Device != "" {
		line += ", chunks clustered on " + s.Device
	}
	switch {
	case s.SortedOn != "" && s.SortedOn == s.Device:
		line += fmt.Sprintf(", %d batches sorted there", s.DeviceSorts)
	case s.SortedOn != "":
		line += fmt.Sprintf(", %d batches sorted on %s", s.DeviceSorts, s.SortedOn)
	}
	return line
}

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// deviceSortBatch is the raw reader's batch when a device sorts them
// (Job.KeySorter): each batch costs it launches and transfers, which the
// reader's default batch would make a large share of its time.
const deviceSortBatch = 1 << 16

// queueDepth is the number of batches between two stages: enough to ride
// out a slow write, few enough to bound memory.
const queueDepth = 4

// Run executes the job as concurrent stages joined by bounded queues:
// reading (decode and calibrate), sorting (when the input is unsorted),
// clustering and writing. A slow stage slows the others; batches are
// recycled. On a decoding error or cancellation it still clusters and
// writes everything read before, then returns the error with the summary
// of what was done; so it does when the clusters held for the writers
// that take their hits pass the member limit (see
// [pixel.MemberLimitError]), after stopping the reading.
func Run(ctx context.Context, job Job) (Summary, error) {
	start := time.Now()
	sum := newSummary(job)
	if err := job.Validate(); err != nil {
		return sum, err
	}
	c, err := NewStream(job.Cluster, job.Mode, job.Workers)
	if err != nil {
		return sum, err
	}
	defer c.Close()
	if job.Labeler != nil {
		c.(*pixel.ChunkedClusterer).SetLabeler(job.Labeler) // mode chunked, definition local: see Validate
		if w, ok := job.Labeler.(interface{ Where() string }); ok {
			sum.Device = w.Where()
		}
	}
	c.KeepMembers(job.Hits != nil || job.Filter != nil && job.FilterHits || job.Clusters.NeedsMembers())
	var sorter *pixel.Sorter
	if w := job.window(); w > 0 {
		if sorter, err = pixel.NewSorter(w, job.Cluster.RestartGap()); err != nil {
			return sum, err
		}
		if job.KeySorter != nil {
			sorter.SetKeySorter(job.KeySorter)
			sum.SortedOn = "the device"
			if w, ok := job.KeySorter.(interface{ Where() string }); ok {
				sum.SortedOn = w.Where()
			}
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	freeHits, fullHits, readDone := startReading(ctx, job, &sum)
	freeClusters, fullClusters := make(chan *clusterBatch, queueDepth), make(chan *clusterBatch, queueDepth)
	for range queueDepth {
		cl := &clusterBatch{}
		cl.Reset()
		freeClusters <- cl
	}
	// Sorting has a stage of its own: sharing one with the clustering, it
	// made that stage the bound of a run. A device that fails it ends the
	// run as a failed chunk step does: what was read is still sorted,
	// clustered and written.
	freeSorted, fullSorted := freeHits, fullHits
	var sortErr error // set before fullSorted closes
	if sorter != nil {
		free, full := make(chan *hitBatch, queueDepth), make(chan *hitBatch, queueDepth)
		for range queueDepth {
			free <- &hitBatch{}
		}
		go func() {
			defer close(full)
			sortHits(sorter, fullHits, freeHits, free, full, func(err error) {
				sortErr = fmt.Errorf("the device failed sorting (the host sorted the rest): %w", err)
				cancel(sortErr)
			})
		}()
		freeSorted, fullSorted = free, full
	}
	writeDone := make(chan error, 1)
	go func() {
		err := writeAll(job, fullClusters, freeClusters)
		if err != nil {
			cancel(err)
		}
		writeDone <- err
	}()
	// The clusterer appends straight into the writer's batches; a batch
	// goes to the writer once it holds clusters.
	batch := <-freeClusters
	batch.Reset()
	pass := func() {
		if batch.Len() > 0 {
			fullClusters <- batch
			batch = <-freeClusters
			batch.Reset()
		}
	}
	// Whatever happens, what was read is clustered and written.
	var clusterErr error
	var outOfRange int64 // the clusterer's, counted
	for h := range fullSorted {
		c.AddTo(&batch.Clusters, &h.Hits)
		batch.arrived = h.arrived
		pass()
		freeSorted <- h
		if job.Counters != nil {
			st := c.Stats()
			job.Counters.Late.Store(st.Late)
			job.Counters.OutOfRange.Add(st.OutOfRange - outOfRange)
			outOfRange = st.OutOfRange
		}
		// Past the member limit the reading stops; the few batches
		// already read are clustered as the rest.
		if err := c.Err(); err != nil && clusterErr == nil {
			clusterErr = fmt.Errorf("clustering stopped after %d hits: %w", c.Stats().Hits, err)
			cancel(clusterErr)
		}
	}
	c.FlushTo(&batch.Clusters)
	pass()
	close(fullClusters)
	writeErr, readErr := <-writeDone, <-readDone
	runErr := cmp.Or(writeErr, clusterErr, sortErr, readErr)
	if sorter != nil {
		sum.DeviceSorts = sorter.DeviceBatches()
	}
	st := c.Stats()
	sum.OutOfRange += st.OutOfRange
	sum.Late = st.Late
	sum.Restarts = st.Restarts
	sum.Clusters = st.Clusters
	sum.Chosen = Chosen(c)
	sum.finish(job, start)
	return sum, runErr
}

// Scan reads the job's sources as Run does (masked and calibrated when
// the job says so) and hands each batch to fn in order, without sorting or
// clustering: for a look at the hits themselves, such as a hit map. The
// batch is valid during the call. It stops at the first error of fn or
// of the reading, or at cancellation, and returns it with the counts of
// the reading; only Sources, Reader, Mask, Calibration, Correction, TDC
// and Progress of the job are used.
func Scan(ctx context.Context, job Job, fn func(*pixel.Hits) error) (Summary, error) {
	start := time.Now()
	sum := newSummary(job)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	free, full, readDone := startReading(ctx, job, &sum)
	var fnErr error
	for h := range full {
		if fnErr == nil {
			if fnErr = fn(&h.Hits); fnErr != nil {
				cancel(fnErr)
			}
		}
		free <- h
	}
	readErr := <-readDone
	sum.finish(job, start)
	return sum, cmp.Or(fnErr, readErr)
}

// newSummary is the summary of a job before it starts.
func newSummary(job Job) Summary {
	var sum Summary
	if job.Mask != nil {
		sum.MaskedPixels = job.Mask.Pixels()
	}
	return sum
}

// finish completes the summary of a job started at start, once its
// reading has ended.
func (s *Summary) finish(job Job, start time.Time) {
	if c := job.Calibration; c != nil {
		s.InvalidEnergy, s.OutsideCalib = c.InvalidHits, c.OutsideHits
		s.CalibSize = fmt.Sprintf("%dx%d", c.Width, c.Height)
	}
	s.Elapsed = time.Since(start)
}

// startReading starts the reading stage (see read): it sends batches on
// full, takes them back on free, and sends its error on done.
func startReading(ctx context.Context, job Job, sum *Summary) (free chan<- *hitBatch, full <-chan *hitBatch, done <-chan error) {
	freeHits, fullHits := make(chan *hitBatch, queueDepth), make(chan *hitBatch, queueDepth)
	for range queueDepth {
		freeHits <- &hitBatch{}
	}
	readDone := make(chan error, 1)
	go func() {
		defer close(fullHits)
		readDone <- read(ctx, job, sum, freeHits, fullHits)
	}()
	return freeHits, fullHits, readDone
}

// sortHits is the sorting stage: it puts the batches from in through the
// sorter, returns them on inFree, and sends the hits released, in batches
// taken from free, on out; at the end of in, it sends everything the
// sorter still holds. A failure of the sorter's device goes to fail, once.
func sortHits(s *pixel.Sorter, in <-chan *hitBatch, inFree chan<- *hitBatch, free chan *hitBatch, out chan<- *hitBatch, fail func(error)) {
	var arrived time.Time
	send := func(release func(*pixel.Hits)) {
		b := <-free
		b.Reset()
		release(&b.Hits)
		if b.Len() == 0 {
			free <- b // room: it came from there
			return
		}
		b.arrived = arrived
		out <- b
	}
	for h := range in {
		arrived = h.arrived
		send(func(b *pixel.Hits) { s.PushTo(b, &h.Hits) })
		inFree <- h
		if err := s.Err(); err != nil && fail != nil {
			fail(err)
			fail = nil
		}
	}
	send(s.FlushTo)
}

// writeAll is the writing stage: it writes the batches from full and
// returns them on free, flushing the sinks every job.Flush; after an error
// it only returns them.
func writeAll(job Job, full <-chan *clusterBatch, free chan<- *clusterBatch) error {
	type out struct {
		clusters int
		arrived  time.Time
	}
	var pending []out // written, not yet flushed
	report := func() {
		if job.Written != nil {
			for _, o := range pending {
				job.Written(o.clusters, o.arrived)
			}
		}
		pending = pending[:0]
	}
	var tick <-chan time.Time
	if job.Flush > 0 {
		t := time.NewTicker(job.Flush)
		defer t.Stop()
		tick = t.C
	}
	var err error
	for {
		select {
		case cl, ok := <-full:
			if !ok {
				if err == nil {
					report() // the sinks' Close flushes
				}
				return err
			}
			if err == nil {
				var n int
				if n, err = write(job, &cl.Clusters); err == nil {
					pending = append(pending, out{n, cl.arrived})
					if job.Counters != nil {
						job.Counters.Clusters.Add(int64(n))
					}
					if tick == nil {
						report()
					}
				}
			}
			free <- cl
		case <-tick:
			if err == nil && len(pending) > 0 {
				if err = flush(job); err == nil {
					report()
				}
			}
		}
	}
}

// flush flushes the sinks that can be.
func flush(job Job) error {
	type flusher interface{ Flush() error }
	if f, ok := job.Clusters.(flusher); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("writing clusters: %w", err)
		}
	}
	if f, ok := job.Hits.(flusher); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("writing hits: %w", err)
		}
	}
	return nil
}

// write hands a batch of clusters, and their hits, to the sinks (those
// the filter keeps, with one), and returns how many.
func write(job Job, cl *pixel.Clusters) (int, error) {
	if job.Filter != nil {
		var err error
		if cl, err = job.Filter(cl); err != nil {
			return 0, fmt.Errorf("choosing clusters: %w", err)
		}
	}
	if err := job.Clusters.Write(cl); err != nil {
		return 0, fmt.Errorf("writing clusters: %w", err)
	}
	if job.Hits != nil {
		if err := job.Hits.WriteMembers(cl); err != nil {
			return 0, fmt.Errorf("writing hits: %w", err)
		}
	}
	return cl.Len(), nil
}

// read decodes the sources in order into batches taken from free and sends
// them on full, until the end, an error or cancellation.
func read(ctx context.Context, job Job, sum *Summary, free <-chan *hitBatch, full chan<- *hitBatch) error {
	var bytesBefore int64
	var prev *tpx3.RawReader
	opt := job.Reader
	if job.KeySorter != nil && opt.Batch == 0 {
		opt.Batch = deviceSortBatch
	}
	for _, src := range job.Sources {
		r, err := tpx3.NewReader(src.R, src.Name, opt)
		if err != nil {
			return err
		}
		if raw, ok := r.(*tpx3.RawReader); ok {
			if prev != nil {
				raw.Continue(prev)
			}
			prev = raw
		}
		sum.Files++
		if src.Arrived != nil {
			sum.Streams++
		}
		var outOfRange int64 // the decoder's, counted
		readErr := readSource(ctx, r, src.Arrived, free, full, func(batch *pixel.Hits) error {
			// Masked first: their hits would count as without energy.
			if job.Mask != nil {
				sum.Masked += int64(job.Mask.Filter(batch))
			}
			if job.Calibration != nil {
				job.Calibration.Apply(batch)
			}
			if job.Correction != nil {
				job.Correction.Correct(batch)
			}
			if raw, ok := r.(*tpx3.RawReader); ok && job.TDC != nil && len(raw.TDC()) > 0 {
				if err := job.TDC(raw.TDC()); err != nil {
					return fmt.Errorf("writing TDC: %w", err)
				}
			}
			if job.Progress != nil {
				job.Progress(bytesBefore + r.Stats().Bytes)
			}
			if job.Counters != nil {
				st := r.Stats()
				job.Counters.Bytes.Store(bytesBefore + st.Bytes)
				job.Counters.Hits.Store(sum.Hits + st.Hits + st.OutOfRange)
				job.Counters.OutOfRange.Add(st.OutOfRange - outOfRange)
				outOfRange = st.OutOfRange
				if job.Calibration != nil {
					job.Counters.Invalid.Store(job.Calibration.InvalidHits)
				}
			}
			return nil
		})
		st := r.Stats()
		sum.Bytes += st.Bytes
		bytesBefore += st.Bytes
		sum.Hits += st.Hits + st.OutOfRange
		sum.OutOfRange += st.OutOfRange
		sum.TDC += st.TDC
		sum.Control += st.Control
		sum.Unknown += st.Unknown
		if readErr != nil {
			return readErr
		}
	}
	return nil
}

// readSource reads r batch by batch, processing each and sending it on,
// until the end, an error or cancellation. A batch read before an error is
// still sent. With arrived, each batch is stamped with the arrival of
// its oldest byte.
func readSource(ctx context.Context, r tpx3.Reader, arrived func(int64) time.Time, free <-chan *hitBatch, full chan<- *hitBatch, process func(*pixel.Hits) error) error {
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		var batch *hitBatch
		select {
		case batch = <-free:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		batch.Reset()
		offset := r.Stats().Bytes
		err := r.Read(&batch.Hits)
		if arrived != nil {
			batch.arrived = arrived(offset)
		}
		perr := process(&batch.Hits)
		full <- batch
		if perr != nil {
			return perr
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
