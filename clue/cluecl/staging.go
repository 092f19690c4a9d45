package cluecl

import (
	"errors"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/internal/parts"
	"github.com/hitflow/hitflow/internal/prefault"
)

// staging is the pinned host memory of a set of buffers (see
// opencl.Pinned): a batch's inputs are written there by the goroutine
// that prepares it, as it reads them, and its results read back there
// (their ids numbered per event as they are copied out), so that both
// transfers run at the bus's speed beside the kernels, where from the Go
// heap a driver copies the data through a buffer of its own first.
type staging struct{ in, out *opencl.Pinned }

// inBytes and outBytes are the pinned bytes a batch of n points of dim
// coordinates takes: coordinates and weights (8 bytes each), layers (4),
// and rho, delta (8), nearest-higher, cluster (4), seed (1).
func inBytes(n, dim int) int { return n * (8*dim + 8 + 4) }
func outBytes(n int) int     { return 25 * n }

// stage gives both sets pinned memory for batches of up to n points of
// dim coordinates, kept from run to run and grown as needed. It reports
// false where the device gives none: the transfers then go from and into
// the Go heap, as fast as the driver moves those.
func (c *Clusterer) stage(n, dim int) bool {
	for i := range c.staging {
		s := &c.staging[i]
		for _, p := range []struct {
			mem  **opencl.Pinned
			size int
		}{{&s.in, inBytes(n, dim)}, {&s.out, outBytes(n)}} {
			if *p.mem != nil && len((*p.mem).Bytes) >= p.size {
				continue
			}
			err := (*p.mem).Release()
			*p.mem = nil
			if err == nil {
				*p.mem, err = c.ctx.NewPinned(max(p.size, 1))
			}
			if err != nil {
				c.releaseStaging()
				return false
			}
		}
	}
	return true
}

// releaseStaging frees the pinned memory.
func (c *Clusterer) releaseStaging() error {
	var errs []error
	for i := range c.staging {
		s := &c.staging[i]
		errs = append(errs, s.in.Release(), s.out.Release())
		s.in, s.out = nil, nil
	}
	return errors.Join(errs...)
}

// stagedPoints are the columns of n points of dim coordinates, their
// layers included, in p: a batch is written there and uploaded from
// there.
func stagedPoints(p *opencl.Pinned, n, dim int) *clue.Points {
	off := 0
	view := func() []float64 {
		v := opencl.Slice[float64](p, off, n)
		off += 8 * n
		return v
	}
	up := &clue.Points{Coords: make([][]float64, dim), Weight: view()}
	for d := range up.Coords {
		up.Coords[d] = view()
	}
	up.Layer = opencl.Slice[int32](p, off, n)
	return up
}

// resultViews are the result columns of n points in p, to read into.
func resultViews(p *opencl.Pinned, n int) clue.Result {
	return clue.Result{
		Rho: opencl.Slice[float64](p, 0, n), Delta: opencl.Slice[float64](p, 8*n, n),
		NH: opencl.Slice[int32](p, 16*n, n), ClusterID: opencl.Slice[int32](p, 20*n, n),
		IsSeed: opencl.Slice[bool](p, 24*n, n),
	}
}

// copyResult copies the columns and counts of src into dst, of the same
// length, each cluster id id as first[id] (first nil: as it is); fresh:
// dst is memory not written yet, prefaulted a part at a time (see
// package prefault).
func copyResult(dst, src *clue.Result, fresh bool, first []int32) {
	parts.Run(len(src.Rho), 0, minPart, func(_, lo, hi int) {
		if fresh {
			prefault.Slice(dst.Rho[lo:hi])
			prefault.Slice(dst.Delta[lo:hi])
			prefault.Slice(dst.NH[lo:hi])
			prefault.Slice(dst.ClusterID[lo:hi])
			prefault.Slice(dst.IsSeed[lo:hi])
		}
		copy(dst.Rho[lo:hi], src.Rho[lo:hi])
		copy(dst.Delta[lo:hi], src.Delta[lo:hi])
		copy(dst.NH[lo:hi], src.NH[lo:hi])
		if first == nil {
			copy(dst.ClusterID[lo:hi], src.ClusterID[lo:hi])
		} else {
			ids := dst.ClusterID[lo:hi]
			for i, id := range src.ClusterID[lo:hi] {
				if id >= 0 {
					id = first[id]
				}
				ids[i] = id
			}
		}
		copy(dst.IsSeed[lo:hi], src.IsSeed[lo:hi])
	})
	dst.Clusters, dst.Outliers = src.Clusters, src.Outliers
}

// minPart is the fewest points a part of the copy out of pinned memory
// takes (see parts.Run): below it, starting a goroutine costs more than
// it saves. It runs on all cores: a batch's columns are tens of
// megabytes, and their destination is often memory not touched yet,
// whose first writes cost a page fault each 4 KiB, which one goroutine
// would pay alone for the whole batch.
const minPart = 1 << 16
