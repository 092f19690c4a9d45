package jpet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestSimulationReproducibleAndPlausible(t *testing.T) {
	s := PaperScanner().WithDefaults()
	ph := PaperPhantom()
	// The authors' A.bin (82,510 detected of 200,000) was made with angles
	// over (-pi/2, pi/2), not the paper's (-pi/4, pi/4).
	a, err := Simulate(t.Context(), s, ph, SimOptions{Emissions: 200000, Seed: 7, Workers: 1, MaxAngle: math.Pi / 2})
	if err != nil {
		t.Fatal(err)
	}
	var calls, last int
	b, _ := Simulate(t.Context(), s, ph, SimOptions{Emissions: 200000, Seed: 7, Workers: 3, MaxAngle: math.Pi / 2,
		Progress: func(done int) { calls, last = calls+1, max(last, done) }})
	if !slices.Equal(a.Events, b.Events) || !slices.Equal(a.Naive, b.Naive) || !slices.Equal(a.Emitted, b.Emitted) || !slices.Equal(a.Detected, b.Detected) {
		t.Fatal("worker count changed the simulation")
	}
	if calls < 2 || last != 200000 {
		t.Fatalf("progress called %d times, last with %d", calls, last)
	}
	if n := len(a.Events); math.Abs(float64(n)-82510) > 4*math.Sqrt(82510) {
		t.Fatalf("%d events detected of 200000", n)
	}
	var emitted, detected float64
	for i := range a.Emitted {
		emitted += a.Emitted[i]
		detected += a.Detected[i]
	}
	if emitted != 200000 || a.Outside != 0 || int(detected) != len(a.Events) {
		t.Fatalf("emitted %v (outside %d) detected %v events %d", emitted, a.Outside, detected, len(a.Events))
	}
}

// TestSimulateCountsOutside: emissions beyond the image (a phantom in
// millimetres, read as metres) are counted, each once.
func TestSimulateCountsOutside(t *testing.T) {
	s := PaperScanner().WithDefaults()
	ph := Phantom{Points: []PointSource{{Z: 0, Y: 0, Activity: 1}, {Z: 0, Y: 0.2, Activity: 1}}}
	const n = 40000
	sim, err := Simulate(t.Context(), s, ph, SimOptions{Emissions: n, Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var emitted float64
	for _, v := range sim.Emitted {
		emitted += v
	}
	if int(emitted)+sim.Outside != n || math.Abs(float64(sim.Outside)-n/2) > 4*math.Sqrt(n/4) {
		t.Fatalf("%v emitted in the image, %d outside, of %d", emitted, sim.Outside, n)
	}
}

// TestReconstructionQuality: on a simulated phantom the error falls over
// the first iterations, and the hot ellipses come out hotter than the
// background by the right order.
func TestReconstructionQuality(t *testing.T) {
	s := PaperScanner().WithDefaults()
	ph := PaperPhantom()
	sim, err := Simulate(t.Context(), s, ph, SimOptions{Emissions: 150000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReconstructor(s, sim.Events, Options{Sensitivity: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var errs []float64
	var q Quality
	for range 5 {
		r.Iterate()
		q = Compare(s, &ph, r.Image())
		errs = append(errs, q.NRMSE)
	}
	t.Logf("NRMSE by iteration %.3f; ellipse means %.3f (true %v)", errs, q.Mean, q.True)
	for i := 1; i < 4; i++ {
		if errs[i] >= errs[i-1] {
			t.Fatalf("error did not fall: %v", errs)
		}
	}
	// Background 0.1, hot 0.7 and 0.5: the contrast must show, of the right
	// order (the smallest ellipse, 12 mm across at 4 mm pixels and 10 mm
	// resolution, recovers half its contrast in five iterations).
	for k := range 5 {
		ratio := q.Mean[k] / q.Mean[5]
		want := q.True[k] / q.True[5]
		if ratio < want/3 || ratio > want*1.5 {
			t.Errorf("ellipse %d: %.2f times the background, truth %.2f", k, ratio, want)
		}
	}
}

// TestWorkersAgree: computed and kept kernels, 1 to 7 workers.
func TestWorkersAgree(t *testing.T) {
	s := PaperScanner().WithDefaults()
	sim, _ := Simulate(t.Context(), s, PaperPhantom(), SimOptions{Emissions: 20000, Seed: 1})
	for _, cache := range []int64{0, 1 << 30} {
		run := func(w int) []float64 {
			r, _ := NewReconstructor(s, sim.Events, Options{Workers: w, KernelCache: cache})
			for range 3 {
				r.Iterate()
			}
			if cache > 0 && r.CachedEvents() != len(sim.Events) {
				t.Fatalf("%d workers kept %d of %d events", w, r.CachedEvents(), len(sim.Events))
			}
			return slices.Clone(r.Image())
		}
		one := run(1)
		if again := run(1); !slices.Equal(one, again) {
			t.Fatalf("cache %d: not deterministic for one worker", cache)
		}
		for _, w := range []int{2, 3, 7} {
			img := run(w)
			if again := run(w); !slices.Equal(img, again) {
				t.Fatalf("cache %d: not deterministic for %d workers", cache, w)
			}
			for i := range img {
				if math.Abs(img[i]-one[i]) > 1e-6*math.Max(math.Abs(one[i]), 1e-3) {
					t.Fatalf("cache %d, %d workers: pixel %d %v vs %v", cache, w, i, img[i], one[i])
				}
			}
		}
	}
}

func TestEventsIO(t *testing.T) {
	in := []Event{{0.01, -0.02, 0.03}, {-0.1, 0.1, 0}}
	var buf bytes.Buffer
	if err := WriteEvents(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadEvents(bytes.NewReader(buf.Bytes()), "e.bin")
	if err != nil || len(out) != 2 || float32(out[0].ZD) != float32(-0.02) {
		t.Fatalf("%v %v", out, err)
	}
	if _, err := ReadEvents(bytes.NewReader(buf.Bytes()[:20]), "e.bin"); err == nil || !strings.Contains(err.Error(), "e.bin: byte 12: 8 trailing bytes") {
		t.Fatalf("error %v", err)
	}
	bad := slices.Clone(buf.Bytes())
	binary.LittleEndian.PutUint32(bad[16:], math.Float32bits(float32(math.NaN())))
	ev, err := ReadEvents(bytes.NewReader(bad), "e.bin")
	if err == nil || !strings.Contains(err.Error(), "byte 12: event 1 has a non-finite value") || len(ev) != 1 {
		t.Fatalf("error %v, %d events", err, len(ev))
	}
}

// TestEventsIOInChunks: a file of many read buffers reads back whole, and
// its errors name the byte where they are, whichever buffer holds it.
func TestEventsIOInChunks(t *testing.T) {
	in := make([]Event, 6000) // 72,000 bytes: two reads
	for i := range in {
		in[i] = Event{float64(float32(i) / 1e4), -float64(float32(i) / 3e4), float64(float32(i%7) / 100)}
	}
	var buf bytes.Buffer
	if err := WriteEvents(&buf, in); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "e.bin")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := ReadEvents(f, "e.bin") // storage sized from the file
	if err != nil || !slices.Equal(out, in) {
		t.Fatalf("%d events back of %d, %v", len(out), len(in), err)
	}
	long := append(slices.Clone(buf.Bytes()), 1, 2, 3, 4, 5)
	if ev, err := ReadEvents(bytes.NewReader(long), "e.bin"); err == nil || !strings.Contains(err.Error(), "e.bin: byte 72000: 5 trailing bytes") || len(ev) != 6000 {
		t.Fatalf("error %v, %d events", err, len(ev))
	}
	// A read that fails inside an event is that error, not trailing bytes.
	broken := io.MultiReader(bytes.NewReader(buf.Bytes()[:70006]), iotest.ErrReader(errors.New("disk gone")))
	if ev, err := ReadEvents(broken, "e.bin"); err == nil || !strings.Contains(err.Error(), "e.bin: byte 70006: disk gone") || !slices.Equal(ev, in[:5833]) {
		t.Fatalf("error %v, %d events", err, len(ev))
	}
	bad := slices.Clone(buf.Bytes())
	binary.LittleEndian.PutUint32(bad[5500*12+8:], math.Float32bits(float32(math.Inf(-1))))
	if ev, err := ReadEvents(bytes.NewReader(bad), "e.bin"); err == nil || !strings.Contains(err.Error(), "byte 66000: event 5500 has a non-finite value") || !slices.Equal(ev, in[:5500]) {
		t.Fatalf("error %v, %d events", err, len(ev))
	}
}

func TestEventsText(t *testing.T) {
	ev, err := ReadEventsText(strings.NewReader("# z_u z_d dl\n0.01 -0.02 0.03\n\n-0.1 0.1 0 # c\n"), "e.txt")
	if f32 := func(v float64) float64 { return float64(float32(v)) }; err != nil || len(ev) != 2 || ev[1] != (Event{f32(-0.1), f32(0.1), 0}) {
		t.Fatalf("%v %v", ev, err)
	}
	for _, bad := range []string{"1 2\n", "1 2 x\n", "1 2 NaN\n", "1 2 1e39\n"} {
		if _, err := ReadEventsText(strings.NewReader(bad), "e.txt"); err == nil || !strings.Contains(err.Error(), "e.txt: line 1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzEventsText: text events read in one part and in small blocks of
// three parts give the same events and the same error.
func FuzzEventsText(f *testing.F) {
	f.Add([]byte("# z_u z_d dl\n0.01 -0.02 0.03\n\n-0.1 0.1 0 # c\n"))
	f.Add([]byte("1 2 3\n4 5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		one, err1 := readEventsText(bytes.NewReader(data), "fuzz.txt", 1<<30, 1)
		three, err3 := readEventsText(bytes.NewReader(data), "fuzz.txt", 1+len(data)%13, 3)
		if fmt.Sprint(err1) != fmt.Sprint(err3) || !slices.Equal(one, three) {
			t.Fatalf("in parts: %d events, %v; in one: %d, %v", len(three), err3, len(one), err1)
		}
		if err1 != nil && !strings.Contains(err1.Error(), "fuzz.txt") {
			t.Fatalf("error without the file name: %v", err1)
		}
	})
}

func FuzzReadEvents(f *testing.F) {
	f.Add(make([]byte, 24))
	f.Add([]byte{0, 0, 0x80, 0x7f, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ReadEvents(bytes.NewReader(data), "fuzz")
		if err == nil && len(ev) != len(data)/12 {
			t.Fatalf("%d events from %d bytes", len(ev), len(data))
		}
		s := PaperScanner().WithDefaults()
		kept, _ := s.Screen(ev, 5)
		if len(kept) > 0 && len(kept) < 50 {
			r, err := NewReconstructor(s, kept, Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			r.Iterate()
			for _, v := range r.Image() {
				if math.IsNaN(v) || v < 0 {
					t.Fatalf("pixel %v", v)
				}
			}
		}
	})
}

func TestPhantomFile(t *testing.T) {
	f := openJPET(t, "phantom.txt")
	ph, err := ParsePhantom(f, "phantom.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := PaperPhantom()
	for i, e := range want.Ellipses {
		g := ph.Ellipses[i]
		if math.Abs(g.Z-e.Z)+math.Abs(g.Y-e.Y)+math.Abs(g.A-e.A)+math.Abs(g.B-e.B)+math.Abs(g.Angle-e.Angle)+math.Abs(g.Activity-e.Activity) > 1e-12 {
			t.Fatalf("ellipse %d: %+v, want %+v", i, g, e)
		}
	}
	for _, bad := range []string{"ellipse 1 2 3\n", "point 1 x 3\n", "ellipse 0 0 -1 1 0 1\n", "# nothing\n", "ellipse 0 0 1e300 1 0 1\n", "ellipse 0 0 1 1e-300 0 1\n"} {
		if _, err := ParsePhantom(strings.NewReader(bad), "p.txt"); err == nil || !strings.Contains(err.Error(), "p.txt") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
	p, err := ParsePhantom(strings.NewReader("0 0 0.01 0.01 0 1\npoint 0.05 0 2\n"), "p.txt")
	if err != nil || len(p.Ellipses) != 1 || len(p.Points) != 1 {
		t.Fatalf("%+v %v", p, err)
	}
	// Overlaps: the first listed ellipse gives the activity.
	if a, k := want.Activity(0, 0); a != 0.3 || k != 0 {
		t.Fatalf("activity at the centre %v from %d", a, k)
	}
}

// FuzzParsePhantom: any text gives shapes a simulation can draw from
// (finite numbers, positive half-axes whose squares are too, activities
// not negative) or an error naming the file.
func FuzzParsePhantom(f *testing.F) {
	f.Add("# paper\nellipse 0 0 0.03 0.06 0 0.3\npoint 0.05 0 2\n")
	f.Add("\ufeff0 0 0.01 0.01 45 1\r\nPOINT 1 2 3 # c\r\n")
	f.Add("ellipse 0 0 -1 1 0 1\npoint 1 2\nline 1 2 3 4\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParsePhantom(strings.NewReader(text), "p.txt")
		if err != nil {
			if !strings.Contains(err.Error(), "p.txt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(p.Ellipses)+len(p.Points) == 0 {
			t.Fatal("a phantom without shapes")
		}
		finite := func(v ...float64) bool {
			return !slices.ContainsFunc(v, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
		}
		for _, e := range p.Ellipses {
			if !finite(e.Z, e.Y, e.A*e.A, e.B*e.B, e.Angle, e.Activity) || !(e.A*e.A > 0 && e.B*e.B > 0 && e.Activity >= 0) {
				t.Fatalf("ellipse %+v", e)
			}
		}
		for _, q := range p.Points {
			if !finite(q.Z, q.Y, q.Activity) || q.Activity < 0 {
				t.Fatalf("point %+v", q)
			}
		}
	})
}

// TestSimulateStops checks that a cancelled simulation returns the
// context's error rather than a partial set of events.
func TestSimulateStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	sim, err := Simulate(ctx, PaperScanner(), PaperPhantom(), SimOptions{Emissions: 1 << 20, Seed: 1})
	if !errors.Is(err, context.Canceled) || sim != nil {
		t.Fatalf("cancelled simulation: %v, %v", sim, err)
	}
}

// TestEventsTextWriter: the text is %g of each float32, as fmt prints it,
// for values of every magnitude, signed zeros and subnormals included,
// and reads back as the binary format does.
func TestEventsTextWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var events []Event
	for i := range 20000 {
		v := func() float64 {
			switch r.IntN(6) {
			case 0:
				return math.Copysign(0, r.NormFloat64())
			case 1:
				return float64(math.Float32frombits(r.Uint32() &^ (0xff << 23))) // subnormal
			case 2:
				return math.Ldexp(r.NormFloat64(), r.IntN(250)-125)
			}
			return r.NormFloat64() * 0.3
		}
		events = append(events, Event{v(), v(), float64(i)})
	}
	var got, want bytes.Buffer
	if err := WriteEventsText(&got, events); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		fmt.Fprintf(&want, "%g %g %g\n", float32(e.ZU), float32(e.ZD), float32(e.DL))
	}
	if got.String() != want.String() {
		t.Fatal("the text differs from fmt's")
	}
	// Read back, the text gives the events of the binary format: the same
	// events give the same image whatever their format.
	var bin bytes.Buffer
	if err := WriteEvents(&bin, events); err != nil {
		t.Fatal(err)
	}
	fromBin, err := ReadEvents(&bin, "e.bin")
	if err != nil {
		t.Fatal(err)
	}
	fromText, err := ReadEventsText(&got, "e.txt")
	if err != nil {
		t.Fatal(err)
	}
	for i := range fromBin {
		if math.Float64bits(fromText[i].ZU) != math.Float64bits(fromBin[i].ZU) || math.Float64bits(fromText[i].ZD) != math.Float64bits(fromBin[i].ZD) || fromText[i].DL != fromBin[i].DL {
			t.Fatalf("event %d: %v from text, %v from the binary format", i, fromText[i], fromBin[i])
		}
	}
}

// TestEventsTextInParts: text read in blocks of any size, each cut into
// any number of parts, gives the events (and the first error, with the
// events before it) of the text read in one part.
func TestEventsTextInParts(t *testing.T) {
	for seed := range 100 {
		r := rand.New(rand.NewPCG(uint64(seed), 5))
		var text strings.Builder
		for i := range r.IntN(400) {
			switch r.IntN(12) {
			case 0:
				text.WriteString("# a comment\n")
			case 1:
				text.WriteString("\n")
			case 2:
				if r.IntN(4) == 0 {
					text.WriteString([]string{"1 2\n", "1 2 x\n", "1 2 NaN\n"}[r.IntN(3)])
					continue
				}
			}
			fmt.Fprintf(&text, "%g  %g\t%d # event\n", r.NormFloat64(), r.NormFloat64(), i)
		}
		want, wantErr := readEventsText(strings.NewReader(text.String()), "e.txt", 1<<30, 1)
		for _, block := range []int{1, 29, 700} {
			for _, workers := range []int{1, 2, 3, 7} {
				got, err := readEventsText(strings.NewReader(text.String()), "e.txt", block, workers)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(got, want) {
					t.Fatalf("seed %d, blocks of %d bytes in %d parts: %d events, %v; want %d, %v", seed, block, workers, len(got), err, len(want), wantErr)
				}
			}
		}
	}
}
