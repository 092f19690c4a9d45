package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// Source is one input stream.
type Source struct {
	Name string
	R    io.Reader
	Size int64 // bytes, for progress; 0 if unknown
}

// ClusterSink receives finished clusters in order.
type ClusterSink interface {
	Write(c *pixel.Clusters) error
	NeedsMembers() bool
}

// HitSink receives the hits of each cluster with the cluster's id.
type HitSink interface {
	WriteLabelled(h *pixel.Hits, from, to int, label int64) error
}

// Job describes one run. The sources are one stream, in order.
type Job struct {
	Sources     []Source
	Reader      tpx3.Options
	Calibration *tpx3.Calibration // nil: uncalibrated
	Unsorted    pixel.Time        // reorder window; 0 trusts the input order
	Cluster     pixel.Config
	Clusters    ClusterSink
	Hits        HitSink                // optional
	TDC         func([]tpx3.TDC) error // optional
	Progress    func(bytesDone int64)  // optional, called after each batch
}

// Summary counts what a run did.
type Summary struct {
	Files         int
	Bytes         int64
	Hits          int64 // hits decoded
	OutOfRange    int64 // hits outside the layout or sensor, not clustered
	Late          int64 // hits later than the reorder window allowed
	InvalidEnergy int64 // hits without a valid energy (calibrated runs)
	Clusters      int64
	TDC           int64
	Control       int64
	Unknown       int64 // raw packets of unknown type
	Elapsed       time.Duration
}

// String is the one-line summary printed at the end of a run.
func (s Summary) String() string {
	rate := 0.0
	if s.Elapsed > 0 {
		rate = float64(s.Hits) / s.Elapsed.Seconds() / 1e6
	}
	line := fmt.Sprintf("hits read %d, clusters %d, late hits %d, invalid hits %d, out of range %d, %.1f Mhit/s (%d files, %.3f s)",
		s.Hits, s.Clusters, s.Late, s.InvalidEnergy, s.OutOfRange, rate, s.Files, s.Elapsed.Seconds())
	if s.TDC > 0 || s.Unknown > 0 {
		line += fmt.Sprintf(", TDC %d, unknown packets %d", s.TDC, s.Unknown)
	}
	return line
}

// Run executes the job. On a decoding error or cancellation it still
// clusters and writes everything read before, then returns the error with
// the summary of what was done.
func Run(ctx context.Context, job Job) (Summary, error) {
	start := time.Now()
	var sum Summary
	c, err := pixel.NewClusterer(job.Cluster)
	if err != nil {
		return sum, err
	}
	c.KeepMembers(job.Hits != nil || job.Clusters.NeedsMembers())
	var sorter *pixel.Sorter
	if job.Unsorted > 0 {
		sorter = pixel.NewSorter(job.Unsorted)
	}
	var bytesBefore int64
	emit := func(cl *pixel.Clusters) error {
		if err := job.Clusters.Write(cl); err != nil {
			return fmt.Errorf("writing clusters: %w", err)
		}
		if job.Hits != nil {
			for i := range cl.Len() {
				if err := job.Hits.WriteLabelled(&cl.Members, cl.Start[i], cl.Start[i+1], cl.ID[i]); err != nil {
					return fmt.Errorf("writing hits: %w", err)
				}
			}
		}
		return nil
	}
	cluster := func(h *pixel.Hits) error {
		if sorter != nil {
			h = sorter.Push(h)
		}
		return emit(c.Add(h))
	}
	runErr := func() error {
		var batch pixel.Hits
		var prev *tpx3.RawReader
		for _, src := range job.Sources {
			r, err := tpx3.NewReader(src.R, src.Name, job.Reader)
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
			readErr := readSource(ctx, r, &batch, func() error {
				if job.Calibration != nil {
					job.Calibration.Apply(&batch)
				}
				if raw, ok := r.(*tpx3.RawReader); ok && job.TDC != nil && len(raw.TDC()) > 0 {
					if err := job.TDC(raw.TDC()); err != nil {
						return fmt.Errorf("writing TDC: %w", err)
					}
				}
				if job.Progress != nil {
					job.Progress(bytesBefore + r.Stats().Bytes)
				}
				return cluster(&batch)
			})
			st := r.Stats()
			sum.Bytes += st.Bytes
			bytesBefore += st.Bytes
			sum.Hits += st.Hits
			sum.OutOfRange += st.OutOfRange
			sum.TDC += st.TDC
			sum.Control += st.Control
			sum.Unknown += st.Unknown
			if readErr != nil {
				return readErr
			}
		}
		return nil
	}()
	// Whatever happened, what was read is clustered and written.
	if sorter != nil {
		if err := emit(c.Add(sorter.Flush())); err != nil && runErr == nil {
			runErr = err
		}
	}
	if err := emit(c.Flush()); err != nil && runErr == nil {
		runErr = err
	}
	st := c.Stats()
	sum.OutOfRange += st.OutOfRange
	sum.Late = st.Late
	sum.Clusters = st.Clusters
	if job.Calibration != nil {
		sum.InvalidEnergy = job.Calibration.InvalidHits
	}
	sum.Elapsed = time.Since(start)
	return sum, runErr
}

// readSource reads r batch by batch, calling process after each, until the
// end, an error or cancellation.
func readSource(ctx context.Context, r tpx3.Reader, batch *pixel.Hits, process func() error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := r.Read(batch)
		if perr := process(); perr != nil {
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
