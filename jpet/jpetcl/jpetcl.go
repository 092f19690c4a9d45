package jpetcl

import (
	_ "embed"
	"errors"
	"fmt"
	"unsafe"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/jpet"
)

//go:embed mlem.cl
var source string

// params are the kernels' constants (params_t in mlem.cl).
type params struct {
	r, isz2, isdl2, norm, pixel, zfirst, yfirst float64
	ny, gaussian, sensitivity, _                int32
}

// buildOptions are the OpenCL compiler's options for mlem.cl: its teams'
// size and their tables' rows are teamSize and maxRows.
var buildOptions = fmt.Sprintf("-cl-std=CL1.2 -DTEAM=%d -DMAXROWS=%d", teamSize, maxRows)

// batchEvents is how many events a kernel launch takes when they are sent
// in batches (the size of the two buffers); residentBatch when they stay
// on the device. A progress report follows each launch; each launch adds
// its work-groups' images to the global one, which a larger batch does
// less often.
const (
	batchEvents   = 1 << 16
	residentBatch = 1 << 20
)

// layout is how the projection's work is laid out on the device.
type layout int

const (
	// global: a work-item an event, the image summed in global memory
	// (when a work-group's own image does not fit in local memory).
	global layout = iota
	// perEvent: a work-item an event, each work-group summing its own
	// image in local memory, added to the global one at the end.
	perEvent
	// teams: as perEvent, but a team of teamSize work-items an event.
	teams
	// segments: as teams, each work-item a stretch of the cells inside
	// the event's ellipse, row after row.
	segments
)

var kernelOf = [...]string{global: "project", perEvent: "projectLocal", teams: "projectTeams", segments: "projectSegments"}

// teamSize is the work-items a team of the teams and segments layouts,
// an event each; maxRows the rows of an event that a segments team's
// tables hold (an event of more goes to the teams kernel, cell by cell,
// after the others: see partitionTall). The paper's GPU code
// gives a warp (32) an event; its events have some 27 rows and 220 cells
// inside their ellipse, and on an H200 teams of 16 ran them faster than
// 32 (BENCHMARKS.md).
const (
	teamSize = 16
	maxRows  = 64
)

// Precision is how the device computes the kernel values.
type Precision int

const (
	// Double computes everything in double precision: the images agree
	// with the CPU's to about 1e-9.
	Double Precision = iota
	// Single computes the kernel values' square roots and exponentials in
	// single precision, the operations that cost most in double on a GPU;
	// the ellipse test (so the boxes and their cells), the exponent and
	// the sums stay in double. The images agree with the CPU's to about
	// 1e-6 relative.
	Single
)

// ParsePrecision reads "double" or "single".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "double":
		return Double, nil
	case "single":
		return Single, nil
	}
	return Double, fmt.Errorf("precision %q: want double or single", s)
}

func (p Precision) String() string {
	switch p {
	case Double:
		return "double"
	case Single:
		return "single"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// Reconstructor runs list-mode MLEM iterations on an OpenCL device, as
// jpet.Reconstructor does on the CPU cores: the same events, kernels, boxes
// and sensitivity, computed in double precision (see SetPrecision).
//
// The events are uploaded once and stay on the device when they fit in
// one buffer and in a quarter of its memory; otherwise they are sent a
// batch at a time in every iteration, each batch's transfer overlapping
// the projection of the one before, so that the size of a run is bound by
// the host's memory, not the device's. The image is summed with atomic
// additions in whatever order the device runs the events: the result is
// not bitwise the same from run to run, but agrees to round-off (about
// 1e-15 relative) with any other run and to 1e-9 with the CPU path. When
// the image fits in a work-group's local memory, each work-group sums its
// events into an image of its own there and adds it at the end into a
// slot of its own in global memory, the slots summed in a fixed order
// (no contention on the global image); on a GPU a team of teamSize
// work-items shares each event, as a warp does in the paper's GPU code.
type Reconstructor struct {
	ctx       *opencl.Context
	s         jpet.Scanner
	opt       jpet.Options
	events    []jpet.EventKernel // the host's copy, for batches sent each iteration
	tall      int                // where the events of more than maxRows rows start (see partitionTall)
	resident  bool               // all events on the device
	prog      *opencl.Program
	project   *opencl.Kernel // kernelOf[layout]
	tallTeams *opencl.Kernel // for segments: the teams kernel of the tall events
	update    *opencl.Kernel
	layout    layout
	precision Precision
	batch     int // events a launch: batchEvents or residentBatch (tests make it small)
	groupSize int
	tallGroup int               // tallTeams' work-group size
	evBuf     *opencl.Buffer    // all the events, when resident
	batches   [2]*opencl.Buffer // otherwise: one sent while the other is projected
	parBuf    *opencl.Buffer
	rho, acc  *opencl.Buffer
	partial   *opencl.Buffer // the local layouts' work-groups' images, a slot each (see slots)
	sens      *opencl.Buffer
	host      []float64 // rho read back, column-major
	img       []float64 // row-major, returned by Image
	iteration int
}

// NewReconstructor prepares the events on the device of ctx. Options'
// Workers and KernelCache do not apply on a device.
func NewReconstructor(ctx *opencl.Context, s jpet.Scanner, events []jpet.Event, opt jpet.Options) (_ *Reconstructor, err error) {
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := Check(ctx); err != nil {
		return nil, err
	}
	r := &Reconstructor{ctx: ctx, s: s, opt: opt, events: s.EventKernels(events, opt.AuthorsBox), batch: batchEvents}
	r.tall = partitionTall(r.events)
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.prog, err = ctx.Build(source, buildOptions); err != nil {
		return nil, err
	}
	pixels := s.NZ * s.NY
	d := ctx.Device
	if err := r.setLayout(chooseLayout(d, pixels)); err != nil {
		return nil, err
	}
	if r.update, err = r.prog.Kernel("update"); err != nil {
		return nil, err
	}
	isz2, isdl2, norm := s.KernelConstants()
	p := params{r: s.R, isz2: isz2, isdl2: isdl2, norm: norm, pixel: s.Pixel,
		zfirst: -float64(s.NZ)*s.Pixel/2 + s.Pixel/2, yfirst: float64(s.NY)*s.Pixel/2 - s.Pixel/2, ny: int32(s.NY)}
	if opt.Kernel == jpet.Gaussian {
		p.gaussian = 1
	}
	r.sens, err = ctx.NewBuffer(8*pixels, opencl.ReadOnly)
	if err != nil {
		return nil, err
	}
	if opt.Sensitivity {
		p.sensitivity = 1
		sens := make([]float64, pixels)
		for iz := range s.NZ {
			for iy := range s.NY {
				sens[iz*s.NY+iy] = s.PixelSensitivity(iz, iy)
			}
		}
		if err := opencl.Write(r.sens, 0, sens); err != nil {
			return nil, err
		}
	}
	if r.parBuf, err = ctx.NewBuffer(int(unsafe.Sizeof(p)), opencl.ReadOnly); err != nil {
		return nil, err
	}
	if err := opencl.Write(r.parBuf, 0, []params{p}); err != nil {
		return nil, err
	}
	if r.rho, err = ctx.NewBuffer(8*pixels, opencl.ReadWrite); err != nil {
		return nil, err
	}
	if r.acc, err = ctx.NewBuffer(8*pixels, opencl.ReadWrite); err != nil {
		return nil, err
	}
	r.host = make([]float64, pixels)
	for i := range r.host {
		r.host[i] = 1
	}
	if err := opencl.Write(r.rho, 0, r.host); err != nil {
		return nil, err
	}
	if err := r.acc.Zero(); err != nil {
		return nil, err
	}
	size := int(unsafe.Sizeof(jpet.EventKernel{})) * max(len(r.events), 1)
	r.resident = int64(size) <= d.MaxAlloc && int64(size) <= d.GlobalMem/4
	if r.resident {
		r.batch = residentBatch
	} else {
		for i := range r.batches {
			if r.batches[i], err = ctx.NewBuffer(int(unsafe.Sizeof(jpet.EventKernel{}))*batchEvents, opencl.ReadOnly); err != nil {
				return nil, err
			}
		}
		return r, ctx.Finish()
	}
	if r.evBuf, err = ctx.NewBuffer(size, opencl.ReadOnly); err != nil {
		return nil, err
	}
	if err := opencl.Write(r.evBuf, 0, r.events); err != nil {
		return nil, err
	}
	return r, ctx.Finish()
}

// Iterate runs one MLEM iteration. An error (the device lost, out of
// resources) leaves the image of the last whole iteration.
func (r *Reconstructor) Iterate() error {
	var err error
	if r.resident {
		err = r.projectResident()
	} else {
		err = r.projectSent()
	}
	if err != nil {
		return r.failed(err)
	}
	pixels := r.s.NZ * r.s.NY
	partial, slots := r.partial, r.slots()
	if r.layout == global {
		partial, slots = r.acc, 0 // not read
	}
	if err := r.update.SetArgs(r.rho, r.acc, partial, int32(slots), int32(pixels)); err != nil {
		return r.failed(err)
	}
	if _, err := r.update.Run([]int{roundUp(pixels, 64)}, nil); err != nil {
		return r.failed(err)
	}
	r.iteration++
	return nil
}

// projectResident projects the events on the device, a batch a launch.
func (r *Reconstructor) projectResident() error {
	for lo := 0; lo < len(r.events); lo += r.batch {
		hi := min(len(r.events), lo+r.batch)
		e, err := r.start(r.evBuf, 0, lo, hi)
		if err == nil {
			err = e.Wait()
		}
		if err != nil {
			return err
		}
		r.progress(hi)
	}
	return nil
}

// projectSent sends the events a batch at a time into two buffers in
// turn, each batch's transfer overlapping the projection of the one
// before; a buffer is written again once the kernel reading it is done.
func (r *Reconstructor) projectSent() (err error) {
	var sent, projected [2]*opencl.Event
	defer func() {
		for i := range sent {
			err = errors.Join(err, sent[i].Wait(), projected[i].Wait())
		}
	}()
	for b, lo := 0, 0; lo < len(r.events); b, lo = b+1, lo+r.batch {
		hi, i := min(len(r.events), lo+r.batch), b%2
		if b >= 2 { // the batch two before is done: its progress counts
			if err := errors.Join(projected[i].Wait(), sent[i].Wait()); err != nil {
				return err
			}
			r.progress(lo - r.batch)
		}
		if sent[i], err = opencl.WriteAsync(r.batches[i], 0, r.events[lo:hi], projected[i]); err != nil {
			return err
		}
		if projected[i], err = r.start(r.batches[i], lo, lo, hi, sent[i]); err != nil {
			return err
		}
	}
	n := (len(r.events) + r.batch - 1) / r.batch
	for b := max(0, n-2); b < n; b++ {
		if err := projected[b%2].Wait(); err != nil {
			return err
		}
		r.progress(min(len(r.events), (b+1)*r.batch))
	}
	return nil
}

// SetPrecision builds the kernels for p; the next iteration uses them.
// On an error the kernels stay as they were.
func (r *Reconstructor) SetPrecision(p Precision) error {
	opts := buildOptions
	if p == Single {
		opts += " -DSINGLE"
	}
	prog, err := r.ctx.Build(source, opts)
	if err != nil {
		return err
	}
	update, err := prog.Kernel("update")
	if err != nil {
		return errors.Join(err, prog.Release())
	}
	oldProg, oldUpdate := r.prog, r.update
	r.prog, r.update = prog, update
	if err := r.setLayout(r.layout); err != nil { // the projection from the new program
		r.prog, r.update = oldProg, oldUpdate
		return errors.Join(err, update.Release(), prog.Release())
	}
	r.precision = p
	return errors.Join(oldUpdate.Release(), oldProg.Release())
}

// chooseLayout picks segments (else teams) on a GPU and perEvent on other
// devices when a work-group's image, and a team's sums and tables, fit in
// local memory (the paper's image is 38 KB: GPUs have 48 KB or more),
// leaving 1 KB to the compiler; else global.
func chooseLayout(d opencl.Device, pixels int) layout {
	switch {
	case !fits(d, pixels, teamSize, perEvent) || d.MaxWorkGroup < teamSize:
		return global
	case d.Type != "gpu":
		return perEvent
	case fits(d, pixels, teamSize, segments):
		return segments
	}
	return teams
}

// fits says whether a work-group of size work-items of layout l has room
// in local memory for its image, its sums and, for segments, its teams'
// rows (localTables).
func fits(d opencl.Device, pixels, size int, l layout) bool {
	return int64(8*(pixels+size)+localTables(l, size)+1024) <= d.LocalMem
}

// localTables is the local memory of the rows' tables of a work-group of
// size work-items of layout l: MAXROWS firsts and counts a team.
func localTables(l layout, size int) int {
	if l != segments {
		return 0
	}
	return 2 * 4 * maxRows * (size / teamSize)
}

// setLayout makes the projection kernel that of l, in work-groups of the
// size that suits it (see groupFor); for segments also the teams kernel
// that projects the tall events.
func (r *Reconstructor) setLayout(l layout) (err error) {
	var k, tall *opencl.Kernel
	defer func() {
		if err != nil {
			err = errors.Join(err, k.Release(), tall.Release())
		}
	}()
	if k, err = r.prog.Kernel(kernelOf[l]); err != nil {
		return err
	}
	size, err := r.groupFor(k, l)
	if err != nil {
		return err
	}
	tallSize := 0
	if l == segments {
		if tall, err = r.prog.Kernel(kernelOf[teams]); err != nil {
			return err
		}
		if tallSize, err = r.groupFor(tall, teams); err != nil {
			return err
		}
	}
	if l != global && r.partial == nil {
		if r.partial, err = r.ctx.NewBuffer(8*r.slots()*r.s.NZ*r.s.NY, opencl.ReadWrite); err == nil {
			err = r.partial.Zero()
		}
		if err != nil {
			return err
		}
	}
	if err := errors.Join(r.project.Release(), r.tallTeams.Release()); err != nil {
		return err
	}
	r.project, r.tallTeams, r.layout, r.groupSize, r.tallGroup = k, tall, l, size, tallSize
	return nil
}

// partitionTall puts the events of more rows than a segments team's
// tables hold after the others, which the iteration's sums do not depend
// on beyond round-off, and returns where they start.
func partitionTall(events []jpet.EventKernel) int {
	n := 0
	for i, e := range events {
		if e.Y1-e.Y0 <= maxRows {
			events[n], events[i] = events[i], events[n]
			n++
		}
	}
	return n
}

// slots is the most work-groups a launch of a local layout runs: enough
// to fill the device, few enough that adding their images up costs little
// against their events, and no more than an eighth of the device's memory
// holds. Each adds its image into a slot of its own of partial, which
// update sums.
func (r *Reconstructor) slots() int {
	d := r.ctx.Device
	return int(max(1, min(4*int64(d.ComputeUnits), d.GlobalMem/8/int64(8*r.s.NZ*r.s.NY))))
}

// groupFor is the work-group size of kernel k of layout l: 256 (128 for
// segments, whose teams then wait for fewer others at its barriers), or
// less where the kernel's registers allow less; for a local image a
// multiple of the team whose image and sums fit. (On an H100, 1024
// measured the same as 256 for teams; for segments 128 and 256 within a
// few per cent of each other on an H100 and an H200, 64 slower.)
func (r *Reconstructor) groupFor(k *opencl.Kernel, l layout) (int, error) {
	d := r.ctx.Device
	most, err := k.MaxGroup()
	if err != nil {
		return 0, err
	}
	size := min(256, most)
	if l == segments {
		size = min(128, most)
	}
	if l == global {
		return size, nil
	}
	if size < teamSize {
		return 0, fmt.Errorf("jpetcl: %s runs %s in work-groups of at most %d work-items", d, k.Name, most)
	}
	size = size / teamSize * teamSize
	for size > teamSize && !fits(d, r.s.NZ*r.s.NY, size, l) {
		size -= teamSize
	}
	return size, nil
}

// start launches the projection of events [lo, hi) of r.events, which
// buf holds from event first on, after the commands of after; for
// segments, the tall ones among them (see partitionTall) by the teams
// kernel after the others.
func (r *Reconstructor) start(buf *opencl.Buffer, first, lo, hi int, after ...*opencl.Event) (*opencl.Event, error) {
	switch {
	case r.layout != segments || hi <= r.tall:
		return r.launch(r.project, r.layout, r.groupSize, buf, lo-first, hi-first, after...)
	case lo >= r.tall:
		return r.launch(r.tallTeams, teams, r.tallGroup, buf, lo-first, hi-first, after...)
	}
	e, err := r.launch(r.project, segments, r.groupSize, buf, lo-first, r.tall-first, after...)
	if err != nil {
		return nil, err
	}
	if err := e.Release(); err != nil { // the kernels' queue runs them in order
		return nil, err
	}
	return r.launch(r.tallTeams, teams, r.tallGroup, buf, r.tall-first, hi-first)
}

// launch runs k, the kernel of layout l, in work-groups of size
// work-items on events [lo, hi) of buf after the commands of after.
func (r *Reconstructor) launch(k *opencl.Kernel, l layout, size int, buf *opencl.Buffer, lo, hi int, after ...*opencl.Event) (*opencl.Event, error) {
	pixels := r.s.NZ * r.s.NY
	var err error
	switch l {
	case global:
		if err := k.SetArgs(buf, int32(lo), int32(hi), r.parBuf, r.rho, r.sens, r.acc); err != nil {
			return nil, err
		}
		return k.Start([]int{roundUp(hi-lo, 64)}, nil, after...)
	case perEvent:
		err = k.SetArgs(buf, int32(lo), int32(hi), r.parBuf, r.rho, r.sens, r.partial, opencl.Local(8*pixels), int32(pixels))
	case teams:
		err = k.SetArgs(buf, int32(lo), int32(hi), r.parBuf, r.rho, r.sens, r.partial, opencl.Local(8*pixels), int32(pixels), opencl.Local(8*size))
	case segments:
		tables := opencl.Local(localTables(segments, size) / 2)
		err = k.SetArgs(buf, int32(lo), int32(hi), r.parBuf, r.rho, r.sens, r.partial, opencl.Local(8*pixels), int32(pixels), opencl.Local(8*size), tables, tables)
	}
	if err != nil {
		return nil, err
	}
	perGroup := size
	if l == teams || l == segments {
		perGroup /= teamSize
	}
	groups := max(1, min(r.slots(), (hi-lo+perGroup-1)/perGroup))
	return k.Start([]int{groups * size}, []int{size}, after...)
}

// progress reports the events done in the iteration.
func (r *Reconstructor) progress(done int) {
	if r.opt.Progress != nil {
		r.opt.Progress(done)
	}
}

// failed is the error of an iteration that did not finish: the image
// stays that of the last whole one, read back before anything else runs.
func (r *Reconstructor) failed(err error) error {
	return fmt.Errorf("jpetcl: iteration %d on %s: %w", r.iteration+1, r.ctx.Device, err)
}

// Iterations returns how many iterations have completed.
func (r *Reconstructor) Iterations() int { return r.iteration }

// Image returns the current image, row-major, row 0 at +y; valid until
// the next call.
func (r *Reconstructor) Image() ([]float64, error) {
	if err := opencl.Read(r.rho, 0, r.host); err != nil {
		return nil, err
	}
	s := r.s
	if len(r.img) != len(r.host) {
		r.img = make([]float64, len(r.host))
	}
	for iy := range s.NY {
		for iz := range s.NZ {
			r.img[iy*s.NZ+iz] = r.host[iz*s.NY+iy]
		}
	}
	return r.img, nil
}

// Close releases everything the reconstruction holds on the device.
func (r *Reconstructor) Close() error {
	err := errors.Join(r.evBuf.Release(), r.batches[0].Release(), r.batches[1].Release(), r.parBuf.Release(), r.rho.Release(), r.acc.Release(), r.partial.Release(), r.sens.Release(),
		r.project.Release(), r.tallTeams.Release(), r.update.Release(), r.prog.Release())
	return err
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// Check reports whether the reconstruction runs on the device of ctx: it
// needs double precision, and its kernels must build (the build is
// cached for the runs after).
func Check(ctx *opencl.Context) error {
	if !ctx.Device.FP64 {
		return fmt.Errorf("jpetcl: %s has no double precision, which the reconstruction needs", ctx.Device)
	}
	prog, err := ctx.Build(source, buildOptions)
	if err != nil {
		return err
	}
	return prog.Release()
}
