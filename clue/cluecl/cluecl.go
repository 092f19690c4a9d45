package cluecl

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
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
	// Upload and Download are the wall times of the transfers; with
	// events in batches, Upload is the first batch's (the others overlap
	// the kernels) and Download the device's time for the reads, which
	// overlap the next batch's kernels.
	Upload, Download time.Duration
	// Host is the part of the overhead spent on the host checking the
	// points and planning the grid (with events: the batches' sum, their
	// copies into pinned memory included, which overlaps the device's
	// work).
	Host time.Duration
	// Numbering is the host's time numbering the clusters per event
	// (with events in batches: the batches', their copies out of pinned
	// memory included, summed; it overlaps the device's work).
	Numbering time.Duration
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
	bufs    *opencl.Buffers // kept from run to run
	events  [3]clue.Events  // a batch's view: clustered, uploaded, prepared
	staging [sets]staging   // pinned memory of batches
	// pinnedLimit bounds the pinned memory of a run's batches in bytes
	// (DefaultPinned; tests set 0 for the Go heap's path).
	pinnedLimit int
	numbers     [sets]clue.Events // batches' cluster ids numbered per event, one per set
	// BatchPoints bounds a batch of points with events (0: DefaultBatch).
	BatchPoints int
	Timings     Timings
	result      clue.Result
}

var kernelNames = []string{"tiles", "count", "scan", "addSums", "scatter", "sortTiles", "gather", "density",
	"nearestHigher", "classify", "seedIds", "jump", "assign", "collect"}

// New builds the kernels for the device of ctx, which stays the caller's
// to close after the clusterer.
func New(ctx *opencl.Context) (_ *Clusterer, err error) {
	if !ctx.Device.FP64 {
		return nil, fmt.Errorf("cluecl: %s has no double precision, which CLUE's exact results need", ctx.Device)
	}
	c := &Clusterer{ctx: ctx, kernels: map[string]*opencl.Kernel{}, bufs: ctx.NewBuffers(), pinnedLimit: DefaultPinned}
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
	first := errors.Join(c.bufs.Release(), c.releaseStaging())
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
	c      *Clusterer
	err    error
	queued []queued // kernels launched, not yet timed
}

// queued is a kernel launched and the step its time goes to.
type queued struct {
	step *time.Duration
	e    *opencl.Event
}

// buffer returns the buffer of that name with room for n elements of
// size bytes (at least one), the last run's when large enough.
func (r *run) buffer(name string, n, size int) *opencl.Buffer {
	if r.err != nil {
		return nil
	}
	b, err := r.c.bufs.Get(name, max(n, 1)*size)
	r.err = err
	return b
}

// launch queues kernel name over n work-items with the arguments; settle
// adds its device time to *step. The kernels run one after another, and
// the host waits only where it reads a result: a launch's latency on a
// GPU is about the time of a small kernel.
func (r *run) launch(step *time.Duration, name string, n int, args ...any) {
	if r.err != nil {
		return
	}
	k := r.c.kernels[name]
	if r.err = k.SetArgs(args...); r.err != nil {
		return
	}
	e, err := k.Start([]int{roundUp(max(n, 1), group)}, []int{group})
	if r.err = err; err == nil {
		r.queued = append(r.queued, queued{step, e})
	}
}

// settle waits for the kernels launched, adds their device times to their
// steps and releases them, returning the run's error.
func (r *run) settle() error {
	for _, q := range r.queued {
		d, err := q.e.Elapsed()
		if err != nil && r.err == nil {
			r.err = err
		}
		*q.step += d
		q.e.Release()
	}
	r.queued = r.queued[:0]
	return r.err
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// sets is the number of sets of input and output buffers: a batch is
// uploaded into one set while the one before is clustered in the other,
// and clustered into one while the one before is read back from the
// other.
const sets = 2

// DefaultPinned is the most page-locked host memory the batches of a run
// take (see staging): batches of DefaultBatch points of two coordinates
// take 0.44 GB; past it, as for a single event of tens of millions of
// points, the transfers go from and into the Go heap.
const DefaultPinned = 1 << 30

// DefaultBatch is the most points of a batch (see Clusterer.BatchPoints).
const DefaultBatch = 1 << 22

// Run clusters the points. The result is valid until the next run.
// Points with events that number more than BatchPoints go to the device
// in batches of whole events (see runBatches).
func (c *Clusterer) Run(pts *clue.Points, p clue.Params) (*clue.Result, error) {
	if len(pts.Event) > 0 && pts.Len() > c.batchPoints() {
		return c.runBatches(pts, p)
	}
	c.Timings = Timings{}
	start := time.Now()
	b, err := c.prepare(pts, p, &c.events[0], nil)
	if err != nil {
		return nil, err
	}
	c.Timings.Host = time.Since(start)
	res := &c.result
	resize(res, pts.Len())
	if pts.Len() == 0 {
		return res, nil
	}
	r := &run{c: c}
	up := time.Now()
	r.upload(0, b, false)
	r.finish() // a write returns once its data is taken, maybe before it is on the device
	c.Timings.Upload = time.Since(up)
	if err := c.compute(r, 0, b, res, 0, nil); err != nil {
		return nil, err
	}
	t := time.Now()
	c.events[0].Number(pts, res)
	c.Timings.Numbering = time.Since(t)
	c.Timings.Overhead = time.Since(start) - c.Timings.Total() - c.Timings.Upload - c.Timings.Download
	return res, nil
}

func (c *Clusterer) batchPoints() int {
	if c.BatchPoints > 0 {
		return c.BatchPoints
	}
	return DefaultBatch
}

// resize gives the result n points, and reports whether in new memory.
func resize(res *clue.Result, n int) (fresh bool) {
	fresh = cap(res.Rho) < n
	res.Rho, res.Delta, res.NH = sized(res.Rho, n), sized(res.Delta, n), sized(res.NH, n)
	res.IsSeed, res.ClusterID = sized(res.IsSeed, n), sized(res.ClusterID, n)
	res.Clusters, res.Outliers = 0, 0
	return fresh
}

func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// batch is a run's input on the host, ready for the device; what an
// upload queued reads stays here until it is done.
type batch struct {
	pts *clue.Points // one layer per (event, layer)
	up  *clue.Points // pts staged in pinned memory, to upload from (nil: pts)
	pl  *clue.Plan
	par []plan // one
}

// upPoints are the points to upload.
func (b *batch) upPoints() *clue.Points {
	if b.up != nil {
		return b.up
	}
	return b.pts
}

// prepare checks the points and the parameters and plans the grid; the
// view of the events is ev's. With stage and events, the view's columns
// are written there as they are read, to upload from.
func (c *Clusterer) prepare(in *clue.Points, p clue.Params, ev *clue.Events, stage *opencl.Pinned) (*batch, error) {
	var up *clue.Points
	var layers []int32
	if stage != nil && len(in.Event) > 0 {
		up = stagedPoints(stage, in.Len(), in.Dim())
		layers = up.Layer
	}
	pts, err := ev.ViewInto(in, layers)
	if err != nil {
		return nil, err
	}
	pl, err := clue.NewPlanCopying(pts, p, up)
	if err != nil {
		return nil, err
	}
	n, dim := pts.Len(), pts.Dim()
	if int64(n) > 1<<31-1-int64(pl.Tiles) {
		return nil, fmt.Errorf("cluecl: %d points are more than the device's 32-bit indices take", n)
	}
	par := plan{lo: pl.Lo, inv: pl.Inv, last: pl.Last, dim: int32(dim), perLayer: int32(pl.PerLayer), tiles: int32(pl.Tiles),
		remapped: int32(len(pl.Layers)), layerOffset: pl.LayerOffset, kernelKind: int32(p.Kernel.Kind),
		kparam: p.Kernel.Param, kamp: p.Kernel.Amp,
		dcPad: clue.Pad(p.DC), dcLimit: clue.Threshold(p.DC), dmPad: clue.Pad(p.DM()), dmLimit: clue.Threshold(p.DM()),
		firstPad: clue.Pad(p.FirstRadius()), firstLimit: clue.Threshold(p.FirstRadius()),
		deltac: p.DeltaC, deltao: p.DeltaO, rhoc: p.RhoC, points: int32(n), layered: int32(min(len(pts.Layer), 1))}
	for d := range dim {
		par.n[d] = int32(pl.N[d])
	}
	return &batch{pts: pts, up: up, pl: pl, par: []plan{par}}, nil
}

// inputs are the input buffers of set (0 or 1: a batch is uploaded into
// one while the other's is clustered).
func (r *run) inputs(set int, b *batch) (par, coords, weight, layer, layers *opencl.Buffer) {
	n, name := b.pts.Len(), func(s string) string { return fmt.Sprint(s, set) }
	return r.buffer(name("plan"), 1, int(unsafe.Sizeof(b.par[0]))), r.buffer(name("coords"), b.pts.Dim()*n, 8), r.buffer(name("weight"), n, 8),
		r.buffer(name("layer"), len(b.pts.Layer), 4), r.buffer(name("layers"), len(b.pl.Layers), 4)
}

// upload sends a batch into the input buffers of set: at once, or queued
// on the transfer queue (the returned events say when it is done; the
// batch must not change until then).
func (r *run) upload(set int, b *batch, async bool) []*opencl.Event {
	par, coords, weight, layer, layers := r.inputs(set, b)
	var done []*opencl.Event
	pts := b.upPoints()
	n := pts.Len()
	for _, w := range []struct {
		buf  *opencl.Buffer
		off  int
		data any
	}{{par, 0, b.par}, {weight, 0, pts.Weight}, {layer, 0, pts.Layer}, {layers, 0, b.pl.Layers}} {
		if r.err == nil {
			done = r.write(w.buf, w.off, w.data, async, done)
		}
	}
	for d, col := range pts.Coords {
		if r.err == nil {
			done = r.write(coords, 8*d*n, col, async, done)
		}
	}
	return done
}

// write copies data (a slice of plan, float64 or int32; nothing when
// empty) to b at byte off, at once or queued, appending the event of a
// queued one to done.
func (r *run) write(b *opencl.Buffer, off int, data any, async bool, done []*opencl.Event) []*opencl.Event {
	var e *opencl.Event
	switch v := data.(type) {
	case []plan:
		e, r.err = send(b, off, v, async)
	case []float64:
		e, r.err = send(b, off, v, async)
	case []int32:
		e, r.err = send(b, off, v, async)
	}
	if e != nil {
		done = append(done, e)
	}
	return done
}

func send[T any](b *opencl.Buffer, off int, data []T, async bool) (*opencl.Event, error) {
	switch {
	case len(data) == 0:
		return nil, nil
	case async:
		return opencl.WriteAsync(b, off, data)
	}
	return nil, opencl.Write(b, off, data)
}

// runBatches clusters points with events in batches of whole events, of
// at most BatchPoints points (an event larger goes alone). Events are
// independent, so the results are those of one run. Where each event's
// points are together, as a reader gives them, a batch is a stretch of
// the input, sent and read back in place; otherwise the points are first
// grouped by event and the results put back.
func (c *Clusterer) runBatches(in *clue.Points, p clue.Params) (*clue.Result, error) {
	c.Timings = Timings{}
	start := time.Now()
	// The values are checked batch by batch as the grids are planned; a
	// bad one is then named by its index in the whole input.
	if err := in.CheckShape(); err != nil {
		return nil, err
	}
	res := &c.result
	fresh := resize(res, in.Len())
	spans, perm := eventSpans(in.Event, c.batchPoints())
	var err error
	if perm == nil {
		err = c.clusterSpans(in, p, spans, res, fresh)
	} else {
		var grouped clue.Result
		resize(&grouped, len(perm))
		if err = c.clusterSpans(gather(in, perm), p, spans, &grouped, true); err == nil {
			scatter(&grouped, perm, res)
		}
	}
	if err != nil {
		if verr := in.Validate(); verr != nil {
			err = verr // the batch's error names the point within the batch
		}
		return nil, err
	}
	// The downloads overlap the kernels of the next batch: the part that
	// does not is in the overhead.
	c.Timings.Overhead = time.Since(start) - c.Timings.Total() - c.Timings.Upload
	return res, nil
}

// clusterSpans clusters the stretches spans of in, each of whole events,
// into the same stretches of res (fresh: in memory not written yet). Four
// batches are in hand at a time: a goroutine prepares one on the host (its
// view and grid) while the one before is uploaded on the upload queue, the
// one before that is clustered, and the results of the one before that
// come back on the download queue and are numbered per event on the host.
func (c *Clusterer) clusterSpans(in *clue.Points, p clue.Params, spans [][2]int, res *clue.Result, fresh bool) (err error) {
	type prepared struct {
		b   *batch
		err error
	}
	// Unbuffered: the goroutine starts batch k+3, in batch k's view, once
	// batch k is done.
	ready, stop, done := make(chan prepared), make(chan struct{}), make(chan struct{})
	// Pinned memory for the batches, unless they would take more than
	// pinnedLimit of it (one event of many millions of points).
	longest := 0
	for _, sp := range spans {
		longest = max(longest, sp[1]-sp[0])
	}
	staged := sets*(inBytes(longest, in.Dim())+outBytes(longest)) <= c.pinnedLimit && c.stage(longest, in.Dim())
	var host atomic.Int64
	defer func() {
		close(stop)
		<-done
		c.Timings.Host = time.Duration(host.Load())
	}()
	go func() {
		defer close(done)
		for k, sp := range spans {
			t0 := time.Now()
			var stage *opencl.Pinned
			if staged { // the set's last upload is done (see the loop below)
				stage = c.staging[k%sets].in
			}
			b, err := c.prepare(slice(in, sp), p, &c.events[k%len(c.events)], stage)
			host.Add(int64(time.Since(t0)))
			select {
			case ready <- prepared{b, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	r := &run{c: c}
	first := <-ready
	if first.err != nil {
		return first.err
	}
	up := time.Now()
	r.upload(0, first.b, false)
	r.finish()
	c.Timings.Upload = time.Since(up)
	var pending []*opencl.Event
	defer func() { r.wait(pending) }() // a failed batch leaves its successor's upload queued
	// Each batch's results are read back, and its ids numbered per event
	// on the host, while the device clusters the next; the batch after
	// that waits for them, as it reuses their output buffers.
	var numbering [sets]sync.WaitGroup
	var numberErr [sets]error
	var download, numbered atomic.Int64
	defer func() {
		for i := range numbering {
			numbering[i].Wait()
			if err == nil && numberErr[i] != nil {
				err = fmt.Errorf("cluecl: %s: %w", c.ctx.Device.Name, numberErr[i])
			}
		}
		c.Timings.Download += time.Duration(download.Load())
		c.Timings.Numbering = time.Duration(numbered.Load())
	}()
	next := first.b
	for k, sp := range spans {
		b := next
		if err := r.wait(pending); err != nil {
			return fmt.Errorf("cluecl: %s: %w", c.ctx.Device.Name, err)
		}
		pending = nil
		if k+1 < len(spans) {
			nb := <-ready
			if nb.err != nil {
				return nb.err
			}
			next = nb.b
			pending = r.upload((k+1)%sets, next, true)
		}
		set := k % sets
		numbering[set].Wait()
		if err := numberErr[set]; err != nil {
			return fmt.Errorf("cluecl: %s: %w", c.ctx.Device.Name, err)
		}
		part := window(res, sp)
		dst := &part
		var views clue.Result
		if staged {
			views = resultViews(c.staging[set].out, sp[1]-sp[0])
			dst = &views
		}
		var reads []*opencl.Event
		err := c.compute(r, set, b, dst, int32(sp[0]), &reads)
		numbering[set].Go(func() {
			for _, e := range reads {
				d, err := e.Elapsed()
				download.Add(int64(d))
				numberErr[set] = cmp.Or(numberErr[set], err, e.Release())
			}
			if err == nil && numberErr[set] == nil {
				// Numbered where the results landed: pinned memory is
				// already mapped, the run's result perhaps not yet.
				t0 := time.Now()
				if staged { // the ids renumbered as they are copied out
					copyResult(&part, &views, fresh, c.numbers[set].Numbers(slice(in, sp), dst))
				} else {
					c.numbers[set].Number(slice(in, sp), dst)
				}
				numbered.Add(int64(time.Since(t0)))
			}
		})
		if err != nil {
			return err
		}
		res.Clusters += dst.Clusters
		res.Outliers += dst.Outliers
	}
	return nil
}

// wait waits for the events and releases them, returning the run's error
// or the first of theirs.
func (r *run) wait(events []*opencl.Event) error {
	for _, e := range events {
		if err := e.Wait(); err != nil && r.err == nil {
			r.err = err
		}
		e.Release()
	}
	return r.err
}

// eventSpans cuts the points into batches of whole events of at most max
// points (an event larger alone), as stretches [lo, hi). When some
// event's points are not together, perm lists the points grouped by
// event (events in order of first appearance, each event's points in
// input order) and the stretches are of that order.
func eventSpans(events []int32, max int) (spans [][2]int, perm []int) {
	seen := map[int32]bool{}
	lo := 0 // the batch's first point
	for i := 0; i < len(events); {
		j := i + 1
		for j < len(events) && events[j] == events[i] {
			j++
		}
		if seen[events[i]] {
			return groupedSpans(events, max)
		}
		seen[events[i]] = true
		if i > lo && j-lo > max {
			spans, lo = append(spans, [2]int{lo, i}), i
		}
		i = j
	}
	if len(events) > lo {
		spans = append(spans, [2]int{lo, len(events)})
	}
	return spans, nil
}

// groupedSpans is eventSpans for points whose events are interleaved.
func groupedSpans(events []int32, max int) ([][2]int, []int) {
	index := map[int32]int{} // event -> its rank of first appearance
	var count []int
	for _, e := range events {
		k, ok := index[e]
		if !ok {
			k = len(count)
			index[e] = k
			count = append(count, 0)
		}
		count[k]++
	}
	start := make([]int, len(count)+1)
	for k, n := range count {
		start[k+1] = start[k] + n
	}
	perm, fill := make([]int, len(events)), slices.Clone(start[:len(count)])
	for i, e := range events {
		k := index[e]
		perm[fill[k]] = i
		fill[k]++
	}
	var spans [][2]int
	lo := 0
	for k := range count {
		if start[k] > lo && start[k+1]-lo > max {
			spans, lo = append(spans, [2]int{lo, start[k]}), start[k]
		}
	}
	if len(events) > lo {
		spans = append(spans, [2]int{lo, len(events)})
	}
	return spans, perm
}

// slice is the points [sp[0], sp[1]) of in, sharing its storage.
func slice(in *clue.Points, sp [2]int) *clue.Points {
	lo, hi := sp[0], sp[1]
	out := &clue.Points{Coords: make([][]float64, in.Dim()), Weight: in.Weight[lo:hi], Event: in.Event[lo:hi]}
	for d, col := range in.Coords {
		out.Coords[d] = col[lo:hi]
	}
	if len(in.Layer) > 0 {
		out.Layer = in.Layer[lo:hi]
	}
	return out
}

// window is the results [sp[0], sp[1]) of res, sharing its storage, with
// no clusters counted yet.
func window(res *clue.Result, sp [2]int) clue.Result {
	lo, hi := sp[0], sp[1]
	return clue.Result{Rho: res.Rho[lo:hi], Delta: res.Delta[lo:hi], NH: res.NH[lo:hi], IsSeed: res.IsSeed[lo:hi], ClusterID: res.ClusterID[lo:hi]}
}

// gather copies the points of in in the order perm.
func gather(in *clue.Points, perm []int) *clue.Points {
	out := &clue.Points{Coords: make([][]float64, in.Dim()), Weight: make([]float64, len(perm)), Event: make([]int32, len(perm))}
	for d := range out.Coords {
		out.Coords[d] = make([]float64, len(perm))
	}
	if len(in.Layer) > 0 {
		out.Layer = make([]int32, len(perm))
	}
	for j, i := range perm {
		for d := range out.Coords {
			out.Coords[d][j] = in.Coords[d][i]
		}
		out.Weight[j], out.Event[j] = in.Weight[i], in.Event[i]
		if out.Layer != nil {
			out.Layer[j] = in.Layer[i]
		}
	}
	return out
}

// scatter puts the results of points grouped in the order perm back in
// input order.
func scatter(grouped *clue.Result, perm []int, res *clue.Result) {
	for j, i := range perm {
		res.Rho[i], res.Delta[i], res.IsSeed[i], res.ClusterID[i] = grouped.Rho[j], grouped.Delta[j], grouped.IsSeed[j], grouped.ClusterID[j]
		res.NH[i] = -1
		if nh := grouped.NH[j]; nh >= 0 {
			res.NH[i] = int32(perm[nh])
		}
	}
	res.Clusters, res.Outliers = grouped.Clusters, grouped.Outliers
}

// compute clusters a batch whose input is in the buffers of set and
// reads its results into res, the nearest-higher points' indices plus
// base.
func (c *Clusterer) compute(r *run, set int, b *batch, res *clue.Result, base int32, queued *[]*opencl.Event) error {
	err := c.steps(r, set, b, res, base, queued)
	if err := errors.Join(err, r.settle()); err != nil {
		return fmt.Errorf("cluecl: %s: %w", c.ctx.Device.Name, err)
	}
	return nil
}

// steps are the steps of a batch, the first error ending them. With
// queued not nil, the results are read back on the download queue, the
// reads' events appended to *queued: res must not be touched, nor the
// output buffers of set used, until they are done.
func (c *Clusterer) steps(r *run, set int, b *batch, res *clue.Result, base int32, queued *[]*opencl.Event) error {
	pts, pl, t := b.pts, b.pl, &c.Timings
	n, dim := pts.Len(), pts.Dim()
	parBuf, coords, weight, layer, layers := r.inputs(set, b)
	if r.err != nil {
		return r.err
	}

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
	// marks in input order (seeds[n] is then their number, and collect
	// counts the outliers into seeds[n+1]).
	kind, upBuf, seedIn, cid := r.buffer("kind", n, 1), r.buffer("up", n, 4), r.buffer("seeds", n+2, 4), r.buffer("cid", n, 4)
	if err := r.zero(seedIn); err != nil {
		return err
	}
	r.launch(&t.SeedsFollowers, "classify", n, parBuf, rho, delta, nh, order, kind, upBuf, seedIn)
	r.scan(&t.SeedsFollowers, seedIn, n+1)
	r.launch(&t.SeedsFollowers, "seedIds", n, order, kind, seedIn, cid, int32(n))

	// Every follower up to its tree's root, by pointer jumping, a few
	// jumps between looks (a jump past the roots changes nothing): trees
	// of up to 2^(jumps-1) levels take one look.
	const jumps = 4
	next, moved := r.buffer("next", n, 4), r.buffer("moved", jumps, 4)
	for r.err == nil {
		if err := r.zero(moved); err != nil {
			return err
		}
		for j := range jumps {
			r.launch(&t.Expansion, "jump", n, upBuf, next, moved, int32(j), int32(n))
			upBuf, next = next, upBuf
		}
		var m [jumps]int32
		if r.err == nil {
			r.err = opencl.Read(moved, 0, m[:])
		}
		if m[jumps-1] == 0 {
			break
		}
	}
	r.launch(&t.Expansion, "assign", n, kind, upBuf, cid, int32(n))

	// The results in input order, into the output buffers of set.
	name := func(s string) string { return fmt.Sprint(s, set) }
	oRho, oDelta, oNH := r.buffer(name("outRho"), n, 8), r.buffer(name("outDelta"), n, 8), r.buffer(name("outNH"), n, 4)
	oSeed, oCID := r.buffer(name("outSeed"), n, 1), r.buffer(name("outCID"), n, 4)
	r.launch(&t.Overhead, "collect", n, order, rho, delta, nh, kind, cid, oRho, oDelta, oNH, oSeed, oCID, base, int32(n), seedIn)
	if r.settle() != nil { // the kernels done, so that the reads time the transfers alone
		return r.err
	}
	down := time.Now()
	var seeds [2]int32
	transfer(r, opencl.Read, seedIn, 4*n, seeds[:])
	res.Clusters, res.Outliers = int(seeds[0]), int(seeds[1])
	fetch(r, oRho, res.Rho, queued)
	fetch(r, oDelta, res.Delta, queued)
	fetch(r, oNH, res.NH, queued)
	fetch(r, oSeed, res.IsSeed, queued)
	fetch(r, oCID, res.ClusterID, queued)
	if r.err == nil && queued == nil {
		t.Download += time.Since(down)
	}
	return r.err
}

// fetch reads b into data: at once, or queued on the download queue, the
// read's event appended to *queued.
func fetch[T any](r *run, b *opencl.Buffer, data []T, queued *[]*opencl.Event) {
	switch {
	case r.err != nil || len(data) == 0:
	case queued == nil:
		r.err = opencl.Read(b, 0, data)
	default:
		var e *opencl.Event
		if e, r.err = opencl.ReadAsync(b, 0, data); e != nil {
			*queued = append(*queued, e)
		}
	}
}

// transfer copies between data and a buffer by move (opencl.Read or
// opencl.Write), unless the run has failed already.
func transfer[T any](r *run, move func(*opencl.Buffer, int, []T) error, b *opencl.Buffer, off int, data []T) {
	if r.err == nil {
		r.err = move(b, off, data)
	}
}

// finish waits for every command queued.
func (r *run) finish() {
	if r.err == nil {
		r.err = r.c.ctx.Finish()
	}
}

// zero queues the clearing of buffers.
func (r *run) zero(bufs ...*opencl.Buffer) error {
	for _, b := range bufs {
		if r.err != nil { // the buffers of a failed run may not exist
			return r.err
		}
		r.err = b.Zero()
	}
	return r.err
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
