package cluecl

import (
	_ "embed"
	"fmt"
	"time"
	"unsafe"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/device/opencl"
)

//go:embed clue.cl
var source string

// buildOptions are the OpenCL compiler's options for clue.cl.
const buildOptions = "-cl-std=CL1.2"

// group is the work-group size of the scans, and the multiple the global
// sizes are rounded up to.
const group = 256

// plan is plan_t of clue.cl.
type plan struct {
	lo, inv, last                  [clue.MaxDim]float64
	n                              [clue.MaxDim]int32
	dim, perLayer, tiles, remapped int32
	layerOffset, kernelKind        int32
	kparam, kamp                   float64
	dcPad, dcLimit, dmPad, dmLimit float64
	firstPad, firstLimit           float64
	deltac, deltao, rhoc           float64
	points, layered                int32
}

// Timings are the paper's steps of a run on the device (kernel time, as
// the device's profiling reports it) and the transfers.
type Timings struct {
	clue.Timings
	Upload, Download time.Duration
}

// Clusterer runs CLUE on an OpenCL device: the same index, densities,
// nearest-higher points, seeds and clusters as clue.Clusterer, to the
// bit. The index is built on the device from clue.Plan's grid (a
// counting pass, a prefix sum, a scatter and each tile put in input
// order); every point's density is summed over its neighbours in the
// order clue meets them, in double-double (exact, whatever the order,
// for whole weights, where clue sums plainly); the kernels' exponential
// is clue's, step for step; the clusters are expanded by pointer
// jumping. It is not safe for concurrent use.
type Clusterer struct {
	ctx     *opencl.Context
	prog    *opencl.Program
	kernels map[string]*opencl.Kernel
	bufs    map[string]*opencl.Buffer // kept from run to run, grown as needed
	events  clue.Events
	Timings Timings
	result  clue.Result
}

var kernelNames = []string{"tiles", "count", "scan", "addSums", "scatter", "sortTiles", "gather", "density",
	"nearestHigher", "classify", "seedIds", "jump", "assign", "collect"}

// New builds the kernels for the device of ctx, which stays the caller's
// to close after the clusterer.
func New(ctx *opencl.Context) (_ *Clusterer, err error) {
	if !ctx.Device.FP64 {
		return nil, fmt.Errorf("cluecl: %s has no double precision, which CLUE's exact results need", ctx.Device)
	}
	c := &Clusterer{ctx: ctx, kernels: map[string]*opencl.Kernel{}, bufs: map[string]*opencl.Buffer{}}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if c.prog, err = ctx.Build(source, buildOptions); err != nil {
		return nil, err
	}
	for _, name := range kernelNames {
		if c.kernels[name], err = c.prog.Kernel(name); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Close releases the buffers, the kernels and the program.
func (c *Clusterer) Close() error {
	var first error
	for _, b := range c.bufs {
		if err := b.Release(); err != nil && first == nil {
			first = err
		}
	}
	clear(c.bufs)
	for _, k := range c.kernels {
		if err := k.Release(); err != nil && first == nil {
			first = err
		}
	}
	clear(c.kernels)
	if err := c.prog.Release(); err != nil && first == nil {
		first = err
	}
	return first
}

// Where names the device.
func (c *Clusterer) Where() string { return c.ctx.Device.String() }

// run is one run's state: the first error ends it.
type run struct {
	c   *Clusterer
	err error
}

// buffer returns the buffer of that name with room for n elements of
// size bytes (at least one), the last run's when large enough.
func (r *run) buffer(name string, n, size int) *opencl.Buffer {
	if r.err != nil {
		return nil
	}
	bytes := max(n, 1) * size
	if b := r.c.bufs[name]; b != nil {
		if b.Size >= bytes {
			return b
		}
		delete(r.c.bufs, name)
		if r.err = b.Release(); r.err != nil {
			return nil
		}
	}
	b, err := r.c.ctx.NewBuffer(bytes+bytes/8, opencl.ReadWrite)
	if err != nil {
		r.err = err
		return nil
	}
	r.c.bufs[name] = b
	return b
}

// launch runs kernel name over n work-items with the arguments, adding
// its device time to *step.
func (r *run) launch(step *time.Duration, name string, n int, args ...any) {
	if r.err != nil {
		return
	}
	k := r.c.kernels[name]
	if r.err = k.SetArgs(args...); r.err != nil {
		return
	}
	d, err := k.Run([]int{roundUp(max(n, 1), group)}, []int{group})
	r.err = err
	*step += d
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// Run clusters the points. The result is valid until the next run.
func (c *Clusterer) Run(pts *clue.Points, p clue.Params) (*clue.Result, error) {
	c.Timings = Timings{}
	start := time.Now()
	in := pts
	pts, err := c.events.View(in) // each (event, layer) pair a layer
	if err != nil {
		return nil, err
	}
	pl, err := clue.NewPlan(pts, p)
	if err != nil {
		return nil, err
	}
	n := pts.Len()
	res := &c.result
	res.Rho, res.Delta, res.NH = sized(res.Rho, n), sized(res.Delta, n), sized(res.NH, n)
	res.IsSeed, res.ClusterID = sized(res.IsSeed, n), sized(res.ClusterID, n)
	res.Clusters, res.Outliers = 0, 0
	if n == 0 {
		return res, nil
	}
	if int64(n) > 1<<31-1-int64(pl.Tiles) {
		return nil, fmt.Errorf("cluecl: %d points are more than the device's 32-bit indices take", n)
	}
	r := &run{c: c}
	if err := c.run(r, pts, p, pl); err != nil {
		return nil, fmt.Errorf("cluecl: %s: %w", c.ctx.Device.Name, err)
	}
	c.events.Number(in, res)
	c.Timings.Overhead = time.Since(start) - c.Timings.Total() - c.Timings.Upload - c.Timings.Download
	return res, nil
}

func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// run does the steps, the first error ending them.
func (c *Clusterer) run(r *run, pts *clue.Points, p clue.Params, pl *clue.Plan) error {
	n, dim, t := pts.Len(), pts.Dim(), &c.Timings
	par := plan{lo: pl.Lo, inv: pl.Inv, last: pl.Last, dim: int32(dim), perLayer: int32(pl.PerLayer), tiles: int32(pl.Tiles),
		remapped: int32(len(pl.Layers)), layerOffset: pl.LayerOffset, kernelKind: int32(p.Kernel.Kind),
		kparam: p.Kernel.Param, kamp: p.Kernel.Amp,
		dcPad: clue.Pad(p.DC), dcLimit: clue.Threshold(p.DC), dmPad: clue.Pad(p.DM()), dmLimit: clue.Threshold(p.DM()),
		firstPad: clue.Pad(p.FirstRadius()), firstLimit: clue.Threshold(p.FirstRadius()),
		deltac: p.DeltaC, deltao: p.DeltaO, rhoc: p.RhoC, points: int32(n), layered: int32(min(len(pts.Layer), 1))}
	for d := range dim {
		par.n[d] = int32(pl.N[d])
	}
	// The input.
	parBuf := r.buffer("plan", 1, int(unsafe.Sizeof(par)))
	coords, weight := r.buffer("coords", dim*n, 8), r.buffer("weight", n, 8)
	layer, layers := r.buffer("layer", len(pts.Layer), 4), r.buffer("layers", len(pl.Layers), 4)
	if r.err != nil {
		return r.err
	}
	up := time.Now()
	transfer(r, opencl.Write, parBuf, 0, []plan{par})
	for d := range dim {
		transfer(r, opencl.Write, coords, 8*d*n, pts.Coords[d])
	}
	transfer(r, opencl.Write, weight, 0, pts.Weight)
	transfer(r, opencl.Write, layer, 0, pts.Layer)
	transfer(r, opencl.Write, layers, 0, pl.Layers)
	if r.err != nil {
		return r.err
	}
	t.Upload = time.Since(up)

	// The index: tiles, counts, their prefix sums, the scatter, each
	// tile in input order, the columns in grid order.
	tiles := pl.Tiles
	key, counts, fill, order := r.buffer("key", n, 4), r.buffer("start", tiles+1, 4), r.buffer("fill", tiles, 4), r.buffer("order", n, 4)
	gcoords, gweight, layerTile := r.buffer("gcoords", dim*n, 8), r.buffer("gweight", n, 8), r.buffer("layerTile", n, 4)
	if r.err != nil {
		return r.err
	}
	if err := r.zero(counts, fill); err != nil {
		return err
	}
	r.launch(&t.Index, "tiles", n, parBuf, coords, layer, layers, key)
	r.launch(&t.Index, "count", n, key, counts, int32(n))
	r.scan(&t.Index, counts, tiles+1) // counts now holds the tiles' starts
	r.launch(&t.Index, "scatter", n, key, counts, fill, order, int32(n))
	r.launch(&t.Index, "sortTiles", tiles, counts, order, int32(tiles))
	r.launch(&t.Index, "gather", n, parBuf, order, key, coords, weight, gcoords, gweight, layerTile)

	rho, delta, nh := r.buffer("rho", n, 8), r.buffer("delta", n, 8), r.buffer("nh", n, 4)
	r.launch(&t.Density, "density", n, parBuf, counts, gcoords, gweight, layerTile, rho)
	r.launch(&t.NearestHigher, "nearestHigher", n, parBuf, counts, gcoords, layerTile, order, rho, nh, delta)

	// Seeds, outliers, followers; the seeds' ids by a prefix sum of their
	// marks in input order.
	kind, upBuf, seedIn, cid := r.buffer("kind", n, 1), r.buffer("up", n, 4), r.buffer("seeds", n+1, 4), r.buffer("cid", n, 4)
	if err := r.zero(seedIn); err != nil {
		return err
	}
	r.launch(&t.SeedsFollowers, "classify", n, parBuf, rho, delta, nh, order, kind, upBuf, seedIn)
	r.scan(&t.SeedsFollowers, seedIn, n+1)
	r.launch(&t.SeedsFollowers, "seedIds", n, order, kind, seedIn, cid, int32(n))

	// Every follower up to its tree's root, by pointer jumping.
	next, moved := r.buffer("next", n, 4), r.buffer("moved", 1, 4)
	for r.err == nil {
		if err := r.zero(moved); err != nil {
			return err
		}
		r.launch(&t.Expansion, "jump", n, upBuf, next, moved, int32(n))
		upBuf, next = next, upBuf
		var m [1]int32
		if r.err == nil {
			r.err = opencl.Read(moved, 0, m[:])
		}
		if m[0] == 0 {
			break
		}
	}
	r.launch(&t.Expansion, "assign", n, kind, upBuf, cid, int32(n))

	// The results in input order.
	oRho, oDelta, oNH, oSeed, oCID := r.buffer("outRho", n, 8), r.buffer("outDelta", n, 8), r.buffer("outNH", n, 4), r.buffer("outSeed", n, 1), r.buffer("outCID", n, 4)
	r.launch(&t.Overhead, "collect", n, order, rho, delta, nh, kind, cid, oRho, oDelta, oNH, oSeed, oCID, int32(n))
	if r.err != nil {
		return r.err
	}
	down := time.Now()
	res := &c.result
	var seeds [1]int32
	transfer(r, opencl.Read, seedIn, 4*n, seeds[:])
	transfer(r, opencl.Read, oRho, 0, res.Rho)
	transfer(r, opencl.Read, oDelta, 0, res.Delta)
	transfer(r, opencl.Read, oNH, 0, res.NH)
	transfer(r, opencl.Read, oSeed, 0, res.IsSeed)
	transfer(r, opencl.Read, oCID, 0, res.ClusterID)
	if r.err != nil {
		return r.err
	}
	t.Download = time.Since(down)
	res.Clusters = int(seeds[0])
	for _, id := range res.ClusterID {
		res.Outliers += b2i(id < 0)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// transfer copies between data and a buffer by move (opencl.Read or
// opencl.Write), unless the run has failed already.
func transfer[T any](r *run, move func(*opencl.Buffer, int, []T) error, b *opencl.Buffer, off int, data []T) {
	if r.err == nil {
		r.err = move(b, off, data)
	}
}

// zero clears buffers and waits.
func (r *run) zero(bufs ...*opencl.Buffer) error {
	for _, b := range bufs {
		if err := b.Zero(); err != nil {
			return err
		}
	}
	return r.c.ctx.Finish()
}

// scan turns data[0:len) into its exclusive prefix sums: each work-group
// scans its stretch, the stretches' totals are scanned the same way, and
// added back.
func (r *run) scan(step *time.Duration, data *opencl.Buffer, length int) {
	r.scanLevel(step, data, length, 0)
}

func (r *run) scanLevel(step *time.Duration, data *opencl.Buffer, length, level int) {
	groups := (length + group - 1) / group
	sums := r.buffer(fmt.Sprint("sums", level), groups+1, 4)
	r.launch(step, "scan", length, data, sums, int32(length), opencl.Local(4*group))
	if groups == 1 || r.err != nil {
		return
	}
	r.scanLevel(step, sums, groups, level+1)
	r.launch(step, "addSums", length, data, sums, int32(length))
}
