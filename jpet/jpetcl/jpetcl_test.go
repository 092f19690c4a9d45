package jpetcl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/internal/devicetest"
	"github.com/hitflow/hitflow/jpet"
)

// device opens the test's device (see devicetest.Open).
func device(t *testing.T) *opencl.Context { return devicetest.Open(t) }

// compare checks every pixel above 1e-3 of the peak within rel of the
// reference, and the sums within sumRel.
func compare(t *testing.T, what string, got, want []float64, rel, sumRel float64) {
	t.Helper()
	peak, sg, sw := 0.0, 0.0, 0.0
	for i := range want {
		peak = max(peak, want[i])
		sg += got[i]
		sw += want[i]
	}
	worst := 0.0
	for i := range want {
		if want[i] > 1e-3*peak {
			worst = max(worst, math.Abs(got[i]-want[i])/want[i])
		}
	}
	if worst > rel || math.Abs(sg-sw) > sumRel*sw {
		t.Fatalf("%s: pixels differ by up to %.3g relative, sums %v and %v", what, worst, sg, sw)
	}
}

// TestMatchesCPU runs the device and the CPU path on the same simulated
// events, every kernel and option, and compares the images.
func TestMatchesCPU(t *testing.T) {
	ctx := device(t)
	s := jpet.PaperScanner().WithDefaults()
	sim, err := jpet.Simulate(context.Background(), s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: 6000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, opt := range []jpet.Options{
		{Kernel: jpet.Analytic}, {Kernel: jpet.Gaussian}, {Kernel: jpet.Analytic, Sensitivity: true},
		{Kernel: jpet.Gaussian, AuthorsBox: true}, {Kernel: jpet.Analytic, Sensitivity: true, AuthorsBox: true},
	} {
		for _, l := range []layout{global, perEvent, teams, segments} {
			cpu, err := jpet.NewReconstructor(s, sim.Events, jpet.Options{Kernel: opt.Kernel, Sensitivity: opt.Sensitivity, AuthorsBox: opt.AuthorsBox, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			dev, err := NewReconstructor(ctx, s, sim.Events, opt)
			if err != nil {
				t.Fatal(err)
			}
			if dev.layout == global {
				t.Fatal("the paper's image does not fit in a work-group's local memory here")
			}
			if err := dev.setLayout(l); err != nil {
				t.Fatal(err)
			}
			if l != global && i%2 == 1 { // one team a work-group
				dev.groupSize = teamSize
			}
			for it := 1; it <= 3; it++ {
				img := iterateBoth(t, cpu, dev, 1)
				compare(t, fmt.Sprintf("%+v, %s, iteration %d", opt, kernelOf[l], it), img, cpu.Image(), 1e-9, 1e-12)
			}
			if err := dev.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestBatchesSentEachIteration: events that do not stay on the device,
// sent a batch at a time into two buffers in turn, give the image of
// resident ones, and report their progress batch by batch.
func TestBatchesSentEachIteration(t *testing.T) {
	ctx := device(t)
	s := jpet.PaperScanner().WithDefaults()
	sim, err := jpet.Simulate(context.Background(), s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: 6000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 700 // several batches, each buffer written again
	n := len(sim.Events)
	var images [2][]float64
	for i, resident := range []bool{true, false} {
		r, err := NewReconstructor(ctx, s, sim.Events, jpet.Options{Kernel: jpet.Gaussian})
		if err != nil {
			t.Fatal(err)
		}
		r.batch = batch
		if !resident {
			sendInBatches(t, ctx, r, batch)
		}
		for it := range 2 {
			var done []int
			r.opt.Progress = func(n int) { done = append(done, n) }
			if err := r.Iterate(); err != nil {
				t.Fatal(err)
			}
			if len(done) != (n+batch-1)/batch || done[0] != batch || done[len(done)-1] != n {
				t.Fatalf("resident %v, iteration %d: progress %v for %d events", resident, it, done, n)
			}
		}
		img, err := r.Image()
		if err != nil {
			t.Fatal(err)
		}
		images[i] = append([]float64(nil), img...)
		r.Close()
	}
	compare(t, "batches", images[1], images[0], 1e-12, 1e-12)
}

// sendInBatches makes r send its events in batches, as if the device
// were small.
func sendInBatches(t *testing.T, ctx *opencl.Context, r *Reconstructor, batch int) {
	t.Helper()
	r.batch = batch
	r.evBuf.Release()
	for i := range r.batches {
		var err error
		if r.batches[i], err = ctx.NewBuffer(48*batch, opencl.ReadOnly); err != nil {
			t.Fatal(err)
		}
	}
	r.evBuf, r.resident = nil, false
}

// TestDeviceLost: an iteration whose device fails at any of its commands
// (a launch, an upload of a batch, a read) returns the error, leaves no
// command in flight and the image of the last whole iteration.
func TestDeviceLost(t *testing.T) {
	ctx := device(t)
	s := jpet.PaperScanner().WithDefaults()
	sim, err := jpet.Simulate(context.Background(), s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: 3000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, resident := range []bool{true, false} {
		r, err := NewReconstructor(ctx, s, sim.Events, jpet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if !resident {
			sendInBatches(t, ctx, r, 400)
		}
		if err := r.Iterate(); err != nil {
			t.Fatal(err)
		}
		img, _ := r.Image()
		before := append([]float64(nil), img...)
		failed := 0
		for after := 0; ; after++ {
			ctx.InjectFailureAfter(after, opencl.ErrLost)
			err := r.Iterate()
			if err == nil {
				ctx.InjectFailure(nil) // not reached: disarmed
				break                  // the iteration had fewer commands
			}
			if !errors.Is(err, opencl.ErrLost) || r.Iterations() != 1 {
				t.Fatalf("resident %v, failing after %d commands: error %v after %d iterations", resident, after, err, r.Iterations())
			}
			if _, _, _, _, events := opencl.Live(); events != 0 {
				t.Fatalf("resident %v, failing after %d commands: %d events left", resident, after, events)
			}
			img, err := r.Image()
			if err != nil {
				t.Fatal(err)
			}
			compare(t, "after the failure", img, before, 0, 0)
			failed++
		}
		if least := map[bool]int{true: 2, false: 10}[resident]; failed < least { // the launch and the read; also the uploads
			t.Fatalf("resident %v: only %d iterations failed", resident, failed)
		}
	}
}

// TestAuthorsReconstruction: the authors' set A reconstructed on the
// device gives their images, as the CPU path does, and the CPU's image
// within 1e-5.
func TestAuthorsReconstruction(t *testing.T) {
	if testing.Short() {
		t.Skip("10 iterations of 82,510 events")
	}
	ctx := device(t)
	dir := "../../../shared/data/jpet"
	f, err := os.Open(filepath.Join(dir, "A.bin"))
	if err != nil {
		t.Skipf("shared data: %v", err)
	}
	defer f.Close()
	events, err := jpet.ReadEvents(f, "A.bin")
	if err != nil {
		t.Fatal(err)
	}
	s := jpet.Scanner{R: 0.125, L: 0.3, Pixel: 0.004, NZ: 75, NY: 63, SigmaZ: 0.01, SigmaDL: 0.04}
	opt := jpet.Options{Kernel: jpet.Gaussian, AuthorsBox: true}
	dev, err := NewReconstructor(ctx, s, events, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cpu, err := jpet.NewReconstructor(s, events, opt)
	if err != nil {
		t.Fatal(err)
	}
	for it := 1; it <= 10; it++ {
		if err := dev.Iterate(); err != nil {
			t.Fatal(err)
		}
		cpu.Iterate()
	}
	img, err := dev.Image()
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "against the CPU", img, cpu.Image(), 1e-5, 1e-6)
	b, err := os.ReadFile(filepath.Join(dir, "rA_10"))
	if err != nil {
		t.Skipf("shared data: %v", err)
	}
	peak, worst := 0.0, 0.0
	want := make([]float64, len(b)/4)
	for i := range want {
		want[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		peak = max(peak, want[i])
	}
	for i := range want {
		worst = max(worst, math.Abs(img[i]-want[i])/peak)
	}
	if worst > 5e-5 {
		t.Fatalf("differs from the authors' image by %.3g of the peak", worst)
	}
}

// TestSegmentsLargeEvents: with 1.5 mm pixels the boxes reach past the
// MAXROWS rows that segments' tables hold (those events go to the teams
// kernel, after the others) and many ellipses hold more cells than the
// values a team keeps between its passes (the rest computed anew); both
// layouts of teams still give the CPU's image, for segments also in
// launches of tall events only, of none and of both, the events on the
// device or sent in batches.
func TestSegmentsLargeEvents(t *testing.T) {
	ctx := device(t)
	s := jpet.PaperScanner()
	s.R, s.L, s.Pixel = 0.0525, 0.06, 0.0015
	s = s.WithDefaults()
	sim, err := jpet.Simulate(context.Background(), s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: 4000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	rows, cells := 0, 0
	for _, e := range s.EventKernels(sim.Events, false) {
		if r := int(e.Y1 - e.Y0); r > maxRows {
			rows++
		} else if r*int(e.Z1-e.Z0) > 2*teamSize*16 {
			cells++
		}
	}
	if rows == 0 || cells == 0 {
		t.Fatalf("%d events of more than %d rows, %d tabled of more than twice the kept cells: the test misses a path", rows, maxRows, cells)
	}
	for _, opt := range []jpet.Options{{Kernel: jpet.Analytic}, {Kernel: jpet.Gaussian, Sensitivity: true}} {
		for _, l := range []layout{teams, segments} {
			if !fits(ctx.Device, s.NZ*s.NY, teamSize, l) {
				t.Skipf("the image does not fit in local memory on %s", ctx.Device)
			}
			cpu, err := jpet.NewReconstructor(s, sim.Events, jpet.Options{Kernel: opt.Kernel, Sensitivity: opt.Sensitivity, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			dev, err := NewReconstructor(ctx, s, sim.Events, opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := dev.setLayout(l); err != nil {
				t.Fatal(err)
			}
			if tall := len(dev.events) - dev.tall; tall != rows {
				t.Fatalf("%d events put last as tall, want %d", tall, rows)
			}
			for i, e := range dev.events {
				if tall := e.Y1-e.Y0 > maxRows; tall != (i >= dev.tall) {
					t.Fatalf("event %d of %d rows, the tall ones from %d", i, e.Y1-e.Y0, dev.tall)
				}
			}
			img := iterateBoth(t, cpu, dev, 2)
			compare(t, fmt.Sprintf("%+v, %s", opt, kernelOf[l]), img, cpu.Image(), 1e-9, 1e-12)
			if l == segments {
				// launches of rows/2 events: the last of them are tall only
				dev.batch = max(1, rows/2)
				compare(t, fmt.Sprintf("%+v, %s, batches of %d", opt, kernelOf[l], dev.batch), iterateBoth(t, cpu, dev, 1), cpu.Image(), 1e-9, 1e-12)
				sendInBatches(t, ctx, dev, dev.batch)
				compare(t, fmt.Sprintf("%+v, %s, sent in batches of %d", opt, kernelOf[l], dev.batch), iterateBoth(t, cpu, dev, 1), cpu.Image(), 1e-9, 1e-12)
			}
			if err := dev.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// BenchmarkIterate times an iteration of about 10^6 events of the paper's
// phantom in each layout the device takes, in each precision, and the
// segments layout also in work-groups of 256 and 64 (ns/op: one
// iteration).
func BenchmarkIterate(b *testing.B) {
	ctx := devicetest.Open(b)
	s := jpet.PaperScanner().WithDefaults()
	sim, err := jpet.Simulate(context.Background(), s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: 1_250_000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, run := range []struct {
		l     layout
		p     Precision
		group int // work-items a work-group (0: groupFor's)
	}{{global, Double, 0}, {perEvent, Double, 0}, {teams, Double, 0}, {segments, Double, 0}, {segments, Double, 256}, {segments, Double, 64},
		{perEvent, Single, 0}, {teams, Single, 0}, {segments, Single, 0}, {segments, Single, 256}, {segments, Single, 64}} {
		name := kernelOf[run.l] + "/" + run.p.String()
		if run.group > 0 {
			name += fmt.Sprintf("/group%d", run.group)
		}
		b.Run(name, func(b *testing.B) {
			r, err := NewReconstructor(ctx, s, sim.Events, jpet.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			if r.layout == global && run.l != global {
				b.Skip("the image does not fit in local memory")
			}
			if err := errors.Join(r.setLayout(run.l), r.SetPrecision(run.p)); err != nil {
				b.Fatal(err)
			}
			if run.group > 0 {
				most, err := r.project.MaxGroup()
				if err != nil {
					b.Fatal(err)
				}
				if run.group > most || !fits(ctx.Device, s.NZ*s.NY, run.group, run.l) {
					b.Skipf("work-groups of %d do not fit", run.group)
				}
				r.groupSize = run.group
			}
			for b.Loop() {
				if err := r.Iterate(); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Image(); err != nil { // waits for the iteration
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSinglePrecision: with the kernel values' square roots and
// exponentials in single precision, ten iterations give the CPU's image
// within the 1e-5 relative a pixel (pixels above 1e-3 of the
// peak) and 1e-6 in sum, for both kernels, with and without the
// sensitivity, in every layout; and the image is not double's to the
// bit, so the single precision did run. Set back to double, the 1e-9 of
// TestMatchesCPU again.
func TestSinglePrecision(t *testing.T) {
	ctx := device(t)
	s := jpet.PaperScanner().WithDefaults()
	sim, err := jpet.Simulate(context.Background(), s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: 20000, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i, opt := range []jpet.Options{{Kernel: jpet.Analytic}, {Kernel: jpet.Gaussian, Sensitivity: true}, {Kernel: jpet.Analytic, Sensitivity: true}, {Kernel: jpet.Gaussian}} {
		cpu, err := jpet.NewReconstructor(s, sim.Events, jpet.Options{Kernel: opt.Kernel, Sensitivity: opt.Sensitivity, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(ctx, s, sim.Events, opt, Single)
		if err != nil {
			t.Fatal(err)
		}
		dev := r.(*Reconstructor)
		if err := dev.setLayout([]layout{global, perEvent, teams, segments}[i%4]); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(dev.Where(), "single precision") {
			t.Fatalf("Where: %q", dev.Where())
		}
		img := iterateBoth(t, cpu, dev, 10)
		what := fmt.Sprintf("%+v, %s", opt, kernelOf[dev.layout])
		compare(t, what, img, cpu.Image(), 1e-5, 1e-6)
		worst := 0.0
		for k, v := range cpu.Image() {
			if v > 0 {
				worst = max(worst, math.Abs(img[k]-v)/v)
			}
		}
		if worst < 1e-9 {
			t.Fatalf("%s: the image is double's (%.3g relative at most)", what, worst)
		}
		if err := dev.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// Single, then double again.
	cpu, err := jpet.NewReconstructor(s, sim.Events, jpet.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := NewReconstructor(ctx, s, sim.Events, jpet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := errors.Join(dev.SetPrecision(Single), dev.SetPrecision(Double)); err != nil {
		t.Fatal(err)
	}
	compare(t, "single, then double", iterateBoth(t, cpu, dev, 3), cpu.Image(), 1e-9, 1e-12)
}

// iterateBoth runs n iterations on the CPU and on the device, and returns
// the device's image.
func iterateBoth(t *testing.T, cpu *jpet.Reconstructor, dev *Reconstructor, n int) []float64 {
	t.Helper()
	for range n {
		cpu.Iterate()
		if err := dev.Iterate(); err != nil {
			t.Fatal(err)
		}
	}
	img, err := dev.Image()
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestSlots: a slot a work-group, four work-groups a compute unit, unless
// the slots' images would take more than an eighth of the device's
// memory; at least one.
func TestSlots(t *testing.T) {
	for _, c := range []struct {
		units  int
		mem    int64
		nz, ny int
		want   int
	}{{132, 80 << 30, 75, 63, 528}, {128, 4 << 30, 512, 512, 256}, {8, 1 << 20, 512, 512, 1}} {
		r := &Reconstructor{ctx: &opencl.Context{Device: opencl.Device{ComputeUnits: c.units, GlobalMem: c.mem}}, s: jpet.Scanner{NZ: c.nz, NY: c.ny}}
		if got := r.slots(); got != c.want {
			t.Errorf("%+v: %d slots", c, got)
		}
	}
}
