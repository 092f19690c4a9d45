package pixelcl

import (
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/pixel"
)

//go:embed pixel.cl
var source string

// buildOptions are the OpenCL compiler's options for pixel.cl.
const buildOptions = "-cl-std=CL1.2"

// Buffer and chunk sizes (pixel.ChunkLabeler's Sizes): on a GPU, large
// buffers cut into short chunks give thousands of work-items; on other
// devices the clusterer's own sizes, a chunk for each core.
const (
	gpuBuffer = 1 << 21
	gpuChunk  = 1024
)

// Labeler is a pixel.ChunkLabeler on an OpenCL device: each chunk of a
// buffer is clustered by one work-item with a matrix of its own, as many
// matrices as a quarter of the device's memory holds (the work-items take
// the chunks in turn beyond that). The buffers stay from call to call,
// grown as needed. Streams may share it: it labels one buffer at a time.
type Labeler struct {
	mu     sync.Mutex
	ctx    *opencl.Context
	prog   *opencl.Program
	kernel *opencl.Kernel
	bufs   *opencl.Buffers
	cells  int     // entries of the matrices' buffer known zero between calls
	bounds []int32 // the chunks' bounds as the kernel reads them
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
	if l.prog, err = ctx.Build(source, buildOptions); err != nil {
		return nil, err
	}
	if l.kernel, err = l.prog.Kernel("label"); err != nil {
		return nil, err
	}
	return l, nil
}

// Close releases the buffers, the kernel and the program.
func (l *Labeler) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.bufs.Release(), l.kernel.Release(), l.prog.Release())
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
func (l *Labeler) Label(h *pixel.Hits, bounds []int, cfg pixel.Config, parent []int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.label(h, bounds, cfg, parent); err != nil {
		l.cells = 0 // a kernel cut short may leave entries: zeroed anew before the next use
		return fmt.Errorf("pixelcl: %s: %w", l.ctx.Device, err)
	}
	return nil
}

func (l *Labeler) label(h *pixel.Hits, bounds []int, cfg pixel.Config, parent []int32) error {
	n, chunks := h.Len(), len(bounds)-1
	if chunks < 1 || n == 0 {
		return nil
	}
	if n > 1<<31-1 {
		return fmt.Errorf("%d hits are more than the device's 32-bit indices take", n)
	}
	stride := cfg.Width + 2
	cells := stride * (cfg.Height + 2)
	d := l.ctx.Device
	budget := min(d.MaxAlloc, d.GlobalMem/4)
	matrices := int(min(int64(chunks), max(1, budget/int64(4*cells))))
	mats, err := l.bufs.Get("mats", 4*matrices*cells)
	if err != nil {
		return err
	}
	if l.cells < matrices*cells {
		// The matrices start zero, and each work-item leaves its own so.
		if err := errors.Join(mats.Zero(), l.ctx.Finish()); err != nil {
			return err
		}
		l.cells = mats.Size / 4
	}
	l.bounds = l.bounds[:0]
	for _, b := range bounds {
		l.bounds = append(l.bounds, int32(b))
	}
	x, errX := l.bufs.Get("x", 2*n)
	y, errY := l.bufs.Get("y", 2*n)
	toa, errT := l.bufs.Get("toa", 8*n)
	bnd, errB := l.bufs.Get("bounds", 4*len(bounds))
	par, errP := l.bufs.Get("parent", 4*n)
	if err := errors.Join(errX, errY, errT, errB, errP); err != nil {
		return err
	}
	if err := errors.Join(opencl.Write(x, 0, h.X), opencl.Write(y, 0, h.Y), opencl.Write(toa, 0, h.ToA), opencl.Write(bnd, 0, l.bounds)); err != nil {
		return err
	}
	if err := l.kernel.SetArgs(x, y, toa, bnd, int32(chunks), int64(cfg.Dt), int32(stride), int32(cells), int32(matrices), mats, par); err != nil {
		return err
	}
	// Whole work-groups of 64: left to the driver, a count of chunks
	// with no small divisor would run in work-groups of one.
	most, err := l.kernel.MaxGroup()
	if err != nil {
		return err
	}
	group := min(64, most)
	if _, err := l.kernel.Run([]int{(matrices + group - 1) / group * group}, []int{group}); err != nil {
		return err
	}
	return opencl.Read(par, 0, parent[:n])
}
