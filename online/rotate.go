package online

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
)

// Rotation says when a long run's outputs are closed, each a complete
// file that analysis can open while the run goes on, and the next ones
// begun: once the clusters file of a part is Every old or holds Size
// bytes. Zero fields never rotate.
type Rotation struct {
	Every time.Duration
	Size  int64
}

// ParseRotation reads a rotation: an age ("10m", "90s", "1h30m") or a
// size with its unit ("1GiB", "500MB", "64KiB"; bytes without one).
func ParseRotation(s string) (Rotation, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return Rotation{}, fmt.Errorf("rotation %q: must be positive", s)
		}
		return Rotation{Every: d}, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return Rotation{}, fmt.Errorf("rotation %q: neither an age such as 10m nor a size such as 1GiB", s)
	}
	if n <= 0 {
		return Rotation{}, fmt.Errorf("rotation %q: must be positive", s)
	}
	return Rotation{Size: n}, nil
}

// ParseSize reads a number of bytes with an optional unit: B, kB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (of 1024).
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size such as 512MiB", s)
	}
	return int64(v * float64(mult)), nil
}

// PartName is the name of part n of a rotated output: "clusters.parquet"
// becomes "clusters-0001.parquet" for n = 1.
func PartName(name string, n int) string {
	ext := filepath.Ext(name)
	return fmt.Sprintf("%s-%04d%s", strings.TrimSuffix(name, ext), n, ext)
}

// Part is one part of a rotated run's outputs.
type Part struct {
	Clusters format.ClusterWriter
	Hits     format.HitWriter // nil for a run without
}

// close closes both outputs, returning the first error.
func (p Part) close() error {
	err := p.Clusters.Close()
	if p.Hits != nil {
		err = errors.Join(err, p.Hits.Close())
	}
	return err
}

// Rotator writes a run's clusters (and hits) into numbered parts, opened
// by open, closing each when the rotation says and before the next
// batch. The parts together hold the clusters of one output, in order,
// with the same ids. It is the pipeline's sink of both.
type Rotator struct {
	rot    Rotation
	open   func(n int) (Part, error)
	cur    Part
	n      int
	opened time.Time
}

// NewRotator opens part 1.
func NewRotator(rot Rotation, open func(n int) (Part, error)) (*Rotator, error) {
	r := &Rotator{rot: rot, open: open}
	if err := r.next(); err != nil {
		return nil, err
	}
	return r, nil
}

// next opens the next part.
func (r *Rotator) next() error {
	p, err := r.open(r.n + 1)
	if err != nil {
		return err
	}
	r.cur, r.n, r.opened = p, r.n+1, time.Now()
	return nil
}

// Parts is the number of parts begun so far.
func (r *Rotator) Parts() int { return r.n }

// due reports whether the part is complete.
func (r *Rotator) due() bool {
	if r.rot.Every > 0 && time.Since(r.opened) >= r.rot.Every {
		return true
	}
	if r.rot.Size > 0 {
		if s, ok := r.cur.Clusters.(interface{ Size() int64 }); ok && s.Size() >= r.rot.Size {
			return true
		}
	}
	return false
}

// Write writes a batch of clusters, to a new part if the last is
// complete; WriteMembers follows with the batch's hits to the same part.
func (r *Rotator) Write(c *pixel.Clusters) error {
	if r.due() {
		if err := r.cur.close(); err != nil {
			r.cur = Part{}
			return err
		}
		if err := r.next(); err != nil {
			return err
		}
	}
	return r.cur.Clusters.Write(c)
}

func (r *Rotator) WriteMembers(c *pixel.Clusters) error { return r.cur.Hits.WriteMembers(c) }

func (r *Rotator) NeedsMembers() bool { return r.cur.Clusters.NeedsMembers() }

// Flush flushes the part's outputs that can be.
func (r *Rotator) Flush() error {
	for _, w := range []any{r.cur.Clusters, r.cur.Hits} {
		if f, ok := w.(interface{ Flush() error }); ok {
			if err := f.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the last part.
func (r *Rotator) Close() error {
	if r.cur.Clusters == nil {
		return nil
	}
	err := r.cur.close()
	r.cur = Part{}
	return err
}

// Abort discards the part being written; the parts before stay.
func (r *Rotator) Abort() {
	if r.cur.Clusters == nil {
		return
	}
	outfile.Abort(r.cur.Clusters)
	if r.cur.Hits != nil {
		outfile.Abort(r.cur.Hits)
	}
	r.cur = Part{}
}
