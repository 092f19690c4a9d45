package pixelcl

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/hitflow/hitflow/device/opencl"
)

//go:embed sort.cl
var sortSource string

// Sort sizes: each work-item of the sort owns a run of keys, gpuRun on a
// GPU, which wants thousands of work-items even for a reader's batch of
// 2^16 hits and has the bandwidth for the digit counts (256 a
// work-item), cpuRun elsewhere, where each work-item is a loop on a core
// and the counts would cost more than the keys; the scans sum blocks of
// scanBlock counts; a batch of fewer than minKeys is left to the host,
// whose radix sort (some nanoseconds a key) takes it in about the time of
// the device's launches (five a pass).
const (
	gpuRun    = 32
	cpuRun    = 1024
	scanBlock = 256
	scanGroup = 256
	minKeys   = 1 << 14
)

// Sorter is a pixel.KeySorter on an OpenCL device: a stable radix sort
// of the keys, eight bits a pass, each work-item moving a run of them in
// order (sort.cl), and only the permutation comes back. Its buffers stay
// from call to call, grown as needed. It sorts one batch at a time, on a
// context of its own, so that it runs beside a Labeler on another.
type Sorter struct {
	mu      sync.Mutex
	ctx     *opencl.Context
	prog    *opencl.Program
	kernels struct{ count, blockSums, scanSums, scanBlocks, scatter *opencl.Kernel }
	bufs    *opencl.Buffers
	min     int
	run     int // keys a work-item
	group   int // work-items a work-group, and the scan's work-group
	scan    int
	events  []*opencl.Event
	timings SortTimings
}

// SortTimings says where a sorter's calls spent their time, summed over
// the calls since the last TakeTimings.
type SortTimings struct {
	Batches, Keys    int
	Upload, Download time.Duration // the transfers, as the caller waited for them
	Kernels          time.Duration // the kernels on the device
	Wall             time.Duration // the calls, end to end
}

// NewSorter builds the sort's kernels for the device of ctx, which stays
// the caller's to close after the sorter.
func NewSorter(ctx *opencl.Context) (_ *Sorter, err error) {
	s := &Sorter{ctx: ctx, bufs: ctx.NewBuffers(), min: minKeys, run: cpuRun}
	if ctx.Device.Type == "gpu" {
		s.run = gpuRun
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	k := &s.kernels
	err = build(ctx, sortSource, &s.prog, map[string]**opencl.Kernel{
		"count": &k.count, "blockSums": &k.blockSums, "scanSums": &k.scanSums, "scanBlocks": &k.scanBlocks, "scatter": &k.scatter})
	if err != nil {
		return nil, err
	}
	// Work-groups of 64 (as launch) where every kernel takes them, the
	// scan's of up to scanGroup.
	s.group = 64
	for _, kn := range []*opencl.Kernel{k.count, k.blockSums, k.scanBlocks, k.scatter} {
		most, err := kn.MaxGroup()
		if err != nil {
			return nil, err
		}
		s.group = min(s.group, most)
	}
	if s.scan, err = k.scanSums.MaxGroup(); err != nil {
		return nil, err
	}
	s.scan = min(s.scan, scanGroup)
	return s, nil
}

// Close releases the buffers, the kernels and the program.
func (s *Sorter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := &s.kernels
	return errors.Join(s.bufs.Release(), k.count.Release(), k.blockSums.Release(), k.scanSums.Release(),
		k.scanBlocks.Release(), k.scatter.Release(), s.prog.Release())
}

// Where names the device.
func (s *Sorter) Where() string { return s.ctx.Device.String() }

// MinKeys implements pixel.KeySorter.
func (s *Sorter) MinKeys() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.min
}

// SetMinKeys sets the fewest keys the sorter takes (see minKeys), for
// tests and measurements with small batches.
func (s *Sorter) SetMinKeys(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.min = n
}

// SetRun sets the keys each work-item owns (see gpuRun), for tests and
// measurements.
func (s *Sorter) SetRun(keys int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run = max(1, keys)
}

// TakeTimings returns the timings and starts them afresh.
func (s *Sorter) TakeTimings() SortTimings {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.timings
	s.timings = SortTimings{}
	return t
}

// SortKeys implements pixel.KeySorter.
func (s *Sorter) SortKeys(keys []uint64, from, bits uint, perm []int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	err := s.sort(keys, from, bits, perm)
	for _, e := range s.events {
		err = errors.Join(err, e.Release())
	}
	s.events = s.events[:0]
	s.timings.Wall += time.Since(start)
	if err != nil {
		return fmt.Errorf("pixelcl: sorting on %s: %w", s.ctx.Device, err)
	}
	return nil
}

func (s *Sorter) sort(keys []uint64, from, bits uint, perm []int32) error {
	n := len(keys)
	switch {
	case len(perm) != n:
		return fmt.Errorf("%d keys and a permutation of %d", n, len(perm))
	case n > math.MaxInt32-s.run || 256*((n+s.run-1)/s.run) > math.MaxInt32:
		return fmt.Errorf("%d keys are more than the device's 32-bit indices take", n)
	case from > 63 || from+bits > 64:
		return fmt.Errorf("keys of %d bits above %d: more than 64", bits, from)
	}
	mask := uint64(1)<<from - 1
	if bits == 0 { // one offset for all: the keys' order
		for i, k := range keys {
			perm[i] = int32(k & mask)
		}
		return nil
	}
	items := (n + s.run - 1) / s.run
	m := 256 * items
	blocks := (m + scanBlock - 1) / scanBlock
	a, errA := s.bufs.Get("keys", 8*n)
	b, errB := s.bufs.Get("moved", 8*n)
	counts, errC := s.bufs.Get("counts", 4*m)
	sums, errS := s.bufs.Get("sums", 4*blocks)
	out, errP := s.bufs.Get("perm", 4*n)
	if err := errors.Join(errA, errB, errC, errS, errP); err != nil {
		return err
	}
	s.timings.Batches++
	s.timings.Keys += n
	t := time.Now()
	if err := opencl.Write(a, 0, keys); err != nil {
		return err
	}
	s.timings.Upload += time.Since(t)
	k := &s.kernels
	over := func(items int) int { return (items + s.group - 1) / s.group * s.group }
	for shift := from; shift < from+bits; shift += 8 {
		last := shift+8 >= from+bits
		for _, st := range []struct {
			k             *opencl.Kernel
			global, local int
			args          []any
		}{
			{k.count, over(items), s.group, []any{a, int32(n), int32(s.run), int32(items), uint32(shift), counts}},
			{k.blockSums, over(blocks), s.group, []any{counts, int32(m), int32(scanBlock), int32(blocks), sums}},
			{k.scanSums, s.scan, s.scan, []any{sums, int32(blocks), opencl.Local(4 * s.scan)}},
			{k.scanBlocks, over(blocks), s.group, []any{counts, int32(m), int32(scanBlock), int32(blocks), sums}},
			{k.scatter, over(items), s.group, []any{a, b, out, boolInt(last), mask, int32(n), int32(s.run), int32(items), uint32(shift), counts}},
		} {
			if err := s.start(st.k, st.global, st.local, st.args); err != nil {
				return err
			}
		}
		a, b = b, a
	}
	// The queue runs in order, so the read would wait for the kernels;
	// waiting first keeps their time out of the transfer's.
	if err := s.ctx.Finish(); err != nil {
		return err
	}
	t = time.Now()
	if err := opencl.Read(out, 0, perm); err != nil {
		return err
	}
	s.timings.Download += time.Since(t)
	for _, e := range s.events {
		d, err := e.Elapsed()
		if err != nil {
			return err
		}
		s.timings.Kernels += d
	}
	return nil
}

// start queues k with args over global work-items in work-groups of
// local, without waiting for it.
func (s *Sorter) start(k *opencl.Kernel, global, local int, args []any) error {
	if err := k.SetArgs(args...); err != nil {
		return err
	}
	e, err := k.Start([]int{global}, []int{local})
	if err != nil {
		return err
	}
	s.events = append(s.events, e)
	return nil
}
