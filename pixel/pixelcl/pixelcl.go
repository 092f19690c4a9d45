package pixelcl

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/pixel"
)

//go:embed pixel.cl
var source string

// buildOptions are the OpenCL compiler's options for pixel.cl.
const buildOptions = "-cl-std=CL1.2"

// Buffer and chunk sizes (pixel.ChunkLabeler's Sizes): on a GPU, large
// buffers cut into short chunks give thousands of work-items (on an
// H200 the chunk step took a quarter of the time in chunks of 256 that
// it took in chunks of 1,024, and the clustering gained, its border work
// included: BENCHMARKS.md); on other devices the clusterer's own sizes,
// a chunk for each core.
const (
	gpuBuffer = 1 << 21
	gpuChunk  = 256
)

// Labeler is a pixel.ChunkLabeler on an OpenCL device: each chunk of a
// buffer is clustered by one work-item with a matrix of its own, as many
// matrices as a quarter of the device's memory holds (the work-items take
// the chunks in turn beyond that); asked to (see SetSums), a work-item
// per chunk then sums its closed clusters, and only those sums and the
// hits of the open clusters come back. The buffers stay from call to
// call, grown as needed. Streams may share it: it labels one buffer at a
// time.
type Labeler struct {
	mu               sync.Mutex
	sums             bool
	ctx              *opencl.Context
	prog             *opencl.Program
	label, count     *opencl.Kernel
	sum              *opencl.Kernel
	bufs             *opencl.Buffers
	zeroed           int     // bytes of the matrices' buffer known zero between calls
	wide             bool    // 32-bit matrix entries even where 16 bits hold a chunk's (to measure)
	bounds           []int32 // the chunks' bounds as the kernels read them
	closedAt, openAt []int32
	timings          Timings
}

// Timings says where a labeler's calls spent their time, summed over the
// calls since the last TakeTimings.
type Timings struct {
	Buffers, Hits    int           // the calls with hits, and their hits
	Wide             int           // the calls whose matrices took 32-bit entries
	Upload, Download time.Duration // the transfers, as the caller waited for them
	Label, Sums      time.Duration // the kernels on the device: the chunk step; the count and sum steps
	Wall             time.Duration // the calls, end to end
}

// TakeTimings returns the timings and starts them afresh.
func (l *Labeler) TakeTimings() Timings {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.timings
	l.timings = Timings{}
	return t
}

// New builds the kernel for the device of ctx, which stays the caller's
// to close after the labeler.
func New(ctx *opencl.Context) (_ *Labeler, err error) {
	l := &Labeler{ctx: ctx, bufs: ctx.NewBuffers()}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if err := build(ctx, source, &l.prog, map[string]**opencl.Kernel{"label": &l.label, "count": &l.count, "sum": &l.sum}); err != nil {
		return nil, err
	}
	return l, nil
}

// build builds the program src for the device of ctx into *prog and makes
// its kernels, each into its place; the caller releases what was made,
// on an error too.
func build(ctx *opencl.Context, src string, prog **opencl.Program, kernels map[string]**opencl.Kernel) (err error) {
	if *prog, err = ctx.Build(src, buildOptions); err != nil {
		return err
	}
	for name, to := range kernels {
		if *to, err = (*prog).Kernel(name); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the buffers, the kernel and the program.
func (l *Labeler) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.bufs.Release(), l.label.Release(), l.count.Release(), l.sum.Release(), l.prog.Release())
}

// SetSums says whether the device also sums each chunk's closed clusters
// when the clusterer asks (see pixel.ChunkJob), or labels the hits only
// and leaves the sums to the host's cores, as New does: on a CPU device
// (PoCL) those same cores sum faster in Go, with fewer transfers and
// launches, and on an H100 and an H200 with 16 host cores the records
// took longer to come back than the cores to sum them (BENCHMARKS.md).
func (l *Labeler) SetSums(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sums = on
}

// SetWideMatrices makes the matrices' entries 32-bit even where the
// paper's 16 bits hold every chunk's hits (a chunk of at most 65,535), as
// New does not: to compare the two layouts.
func (l *Labeler) SetWideMatrices(wide bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wide = wide
}

// Sums reports whether the device sums (see SetSums).
func (l *Labeler) Sums() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sums
}

// Where names the device.
func (l *Labeler) Where() string { return l.ctx.Device.String() }

// Sizes suits the device (see gpuBuffer).
func (l *Labeler) Sizes() (buffer, chunk int) {
	if l.ctx.Device.Type == "gpu" {
		return gpuBuffer, gpuChunk
	}
	return 0, 0
}

// Label implements pixel.ChunkLabeler.
func (l *Labeler) Label(job *pixel.ChunkJob) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := time.Now()
	defer func() { l.timings.Wall += time.Since(start) }()
	if err := l.run(job); err != nil {
		l.zeroed = 0 // a kernel cut short may leave entries: zeroed anew before the next use
		return fmt.Errorf("pixelcl: %s: %w", l.ctx.Device, err)
	}
	return nil
}

func (l *Labeler) run(job *pixel.ChunkJob) error {
	h := job.Hits
	n, chunks := h.Len(), len(job.Bounds)-1
	if chunks < 1 || n == 0 {
		job.Summarised = job.Summarise && l.sums
		job.Closed, job.Open = growLen(job.Closed, max(chunks, 0)), growLen(job.Open, max(chunks, 0))
		clear(job.Closed)
		clear(job.Open)
		return nil
	}
	if n > 1<<31-1 {
		return fmt.Errorf("%d hits are more than the device's 32-bit indices take", n)
	}
	l.bounds = l.bounds[:0]
	for _, b := range job.Bounds {
		l.bounds = append(l.bounds, int32(b))
	}
	x, errX := l.bufs.Get("x", 2*n)
	y, errY := l.bufs.Get("y", 2*n)
	toa, errT := l.bufs.Get("toa", 8*n)
	bnd, errB := l.bufs.Get("bounds", 4*len(l.bounds))
	par, errP := l.bufs.Get("parent", 4*n)
	if err := errors.Join(errX, errY, errT, errB, errP); err != nil {
		return err
	}
	l.timings.Buffers++
	l.timings.Hits += n
	err := l.transfer(&l.timings.Upload, func() error {
		return errors.Join(opencl.Write(x, 0, h.X), opencl.Write(y, 0, h.Y), opencl.Write(toa, 0, h.ToA), opencl.Write(bnd, 0, l.bounds))
	})
	if err != nil {
		return err
	}
	if err := l.labelChunks(job, x, y, toa, bnd, par); err != nil {
		return err
	}
	if job.Summarise && l.sums {
		return l.summarise(job, x, y, toa, bnd, par)
	}
	return l.transfer(&l.timings.Download, func() error { return opencl.Read(par, 0, job.Parent[:n]) })
}

// transfer runs f, synchronous transfers, adding its time to d.
func (l *Labeler) transfer(d *time.Duration, f func() error) error {
	start := time.Now()
	err := f()
	*d += time.Since(start)
	return err
}

// labelChunks runs the chunk step, leaving each hit's root in par.
func (l *Labeler) labelChunks(job *pixel.ChunkJob, x, y, toa, bnd, par *opencl.Buffer) error {
	chunks, cfg := len(job.Bounds)-1, job.Config
	stride := cfg.Width + 2
	cells := stride * (cfg.Height + 2)
	// The paper's 16-bit entries (a hit's index in its chunk plus one)
	// where every chunk allows, half the memory of 32-bit ones.
	wide, entry := l.wide, 2
	for k := range chunks {
		wide = wide || job.Bounds[k+1]-job.Bounds[k] > math.MaxUint16
	}
	if wide {
		entry = 4
		l.timings.Wide++
	}
	d := l.ctx.Device
	budget := min(d.MaxAlloc, d.GlobalMem/4)
	matrices := int(min(int64(chunks), max(1, budget/int64(entry*cells))))
	mats, err := l.bufs.Get("mats", entry*matrices*cells)
	if err != nil {
		return err
	}
	if l.zeroed < entry*matrices*cells {
		// The matrices start zero, and each work-item leaves its own so.
		if err := errors.Join(mats.Zero(), l.ctx.Finish()); err != nil {
			return err
		}
		l.zeroed = mats.Size
	}
	err = l.label.SetArgs(x, y, toa, bnd, int32(chunks), int64(cfg.Dt), int32(stride), int32(cells), int32(matrices), boolInt(wide), mats, par)
	if err != nil {
		return err
	}
	return launch(l.label, matrices, &l.timings.Label)
}

// summarise sums the closed clusters of the labelled chunks and lists the
// open clusters' hits (see pixel.ChunkJob).
func (l *Labeler) summarise(job *pixel.ChunkJob, x, y, toa, bnd, par *opencl.Buffer) error {
	h := job.Hits
	n, chunks := h.Len(), len(job.Bounds)-1
	start, errS := l.bufs.Get("start", 8*chunks)
	end, errE := l.bufs.Get("end", 8*chunks)
	reach, errR := l.bufs.Get("reach", n)
	last, errL := l.bufs.Get("last", 4*n)
	closed, errC := l.bufs.Get("closed", 4*chunks)
	opened, errO := l.bufs.Get("opened", 4*chunks)
	if err := errors.Join(errS, errE, errR, errL, errC, errO); err != nil {
		return err
	}
	err := l.transfer(&l.timings.Upload, func() error {
		return errors.Join(opencl.Write(start, 0, job.Start[:chunks]), opencl.Write(end, 0, job.End[:chunks]))
	})
	if err != nil {
		return err
	}
	err = l.count.SetArgs(toa, par, bnd, int32(chunks), start, end, job.Span, reach, last, closed, opened)
	if err != nil {
		return err
	}
	if err := launch(l.count, chunks, &l.timings.Sums); err != nil {
		return err
	}
	job.Closed, job.Open = growLen(job.Closed, chunks), growLen(job.Open, chunks)
	err = l.transfer(&l.timings.Download, func() error {
		return errors.Join(opencl.Read(closed, 0, job.Closed), opencl.Read(opened, 0, job.Open))
	})
	if err != nil {
		return err
	}
	l.closedAt, l.openAt = l.closedAt[:0], l.openAt[:0]
	var closedN, openN int
	for k := range chunks {
		l.closedAt, l.openAt = append(l.closedAt, int32(closedN)), append(l.openAt, int32(openN))
		closedN += int(job.Closed[k])
		openN += int(job.Open[k])
	}
	fields := pixel.SumFields
	if h.Calibrated() {
		fields = pixel.SumFieldsCalibrated
	}
	closedAt, errC := l.bufs.Get("closedAt", 4*chunks)
	openAt, errO := l.bufs.Get("openAt", 4*chunks)
	tot, errT := l.bufs.Get("tot", 2*n)
	energy, errE := l.bufs.Get("energy", 4*max(1, len(h.E)))
	slot, errSl := l.bufs.Get("slot", 4*n)
	sums, errSu := l.bufs.Get("sums", 8*fields*max(1, closedN))
	openHits, errH := l.bufs.Get("openHits", 4*max(1, openN))
	if err := errors.Join(errC, errO, errT, errE, errSl, errSu, errH); err != nil {
		return err
	}
	err = l.transfer(&l.timings.Upload, func() error {
		return errors.Join(opencl.Write(closedAt, 0, l.closedAt), opencl.Write(openAt, 0, l.openAt), opencl.Write(tot, 0, h.ToT), opencl.Write(energy, 0, h.E))
	})
	if err != nil {
		return err
	}
	err = l.sum.SetArgs(x, y, toa, tot, energy, boolInt(h.Calibrated()), int32(fields), par, bnd, int32(chunks), job.Span, reach, last, closedAt, openAt, slot, sums, openHits)
	if err != nil {
		return err
	}
	if err := launch(l.sum, chunks, &l.timings.Sums); err != nil {
		return err
	}
	job.Sums, job.OpenHits = growLen(job.Sums, fields*closedN), growLen(job.OpenHits, openN)
	err = l.transfer(&l.timings.Download, func() error {
		return errors.Join(opencl.Read(sums, 0, job.Sums), opencl.Read(openHits, 0, job.OpenHits), opencl.Read(par, 0, job.Parent[:n]))
	})
	if err != nil {
		return err
	}
	job.Summarised = true
	return nil
}

// launch runs k on items work-items in whole work-groups of 64 (left to
// the driver, a count with no small divisor would run in work-groups of
// one; the extra work-items do nothing), adding its time on the device to
// d.
func launch(k *opencl.Kernel, items int, d *time.Duration) error {
	most, err := k.MaxGroup()
	if err != nil {
		return err
	}
	group := min(64, most)
	took, err := k.Run([]int{(items + group - 1) / group * group}, []int{group})
	*d += took
	return err
}

// boolInt is b as a kernel's int argument.
func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// growLen is s with length n, its storage kept when large enough.
func growLen[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
