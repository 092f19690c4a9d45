package jpet

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

const jpetData = "../../shared/data/jpet"

func openJPET(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(jpetData, name))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("shared data %s not present; skipping", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readFloat32Image(t *testing.T, name string) []float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(jpetData, name))
	if err != nil {
		t.Skipf("shared data %s: %v", name, err)
	}
	img := make([]float64, len(b)/4)
	for i := range img {
		img[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return img
}

// TestAuthorsReconstruction reproduces the authors' CPU reconstruction of
// A.bin (Gaussian kernel, their box, no sensitivity) after 1, 5 and 10
// iterations. Their code runs in float32, this one in float64.
func TestAuthorsReconstruction(t *testing.T) {
	s := Scanner{R: 0.125, L: 0.3, Pixel: 0.004, NZ: 75, NY: 63, SigmaZ: 0.01, SigmaDL: 0.04}
	events, err := ReadEvents(openJPET(t, "A.bin"), "A.bin")
	if err != nil {
		t.Fatal(err)
	}
	// The authors reconstruct every event; 2,260 have a hit beyond a strip
	// end, 3 of them by more than 3 sigma_z and none by more than 5.
	_, off := s.Screen(events, 0)
	_, far := s.Screen(events, 3)
	kept, none := s.Screen(events, 5)
	if len(events) != 82510 || off != 2260 || far != 3 || none != 0 || len(kept) != len(events) {
		t.Fatalf("%d events; beyond the ends %d, by 3 sigma %d, by 5 sigma %d", len(events), off, far, none)
	}
	r, err := NewReconstructor(s, events, Options{Kernel: Gaussian, AuthorsBox: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for it := 1; it <= 10; it++ {
		r.Iterate()
		name := map[int]string{1: "rA_01", 5: "rA_05", 10: "rA_10"}[it]
		if name == "" {
			continue
		}
		want := readFloat32Image(t, name)
		got := r.Image()
		var maxRel, sum float64
		peak := 0.0
		for _, v := range want {
			peak = max(peak, v)
		}
		for i := range want {
			sum += got[i]
			maxRel = max(maxRel, math.Abs(got[i]-want[i])/peak)
		}
		t.Logf("%s: max |diff| / peak %.3g, sum %.6g", name, maxRel, sum)
		if tol := map[int]float64{1: 1e-5, 5: 3e-5, 10: 5e-5}[it]; maxRel > tol || math.Abs(sum-82510) > 0.01 {
			t.Errorf("%s: differs from the authors' image by %.3g of the peak", name, maxRel)
		}
	}
}

// TestOptionsValidate: options a run cannot use are refused, by the
// options themselves and by the functions that take them.
func TestOptionsValidate(t *testing.T) {
	s := PaperScanner()
	for _, o := range []Options{{Kernel: Gaussian + 1}, {Workers: -1}, {KernelCache: -1}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
		if _, err := NewReconstructor(s, nil, o); err == nil {
			t.Errorf("NewReconstructor took %+v", o)
		}
	}
	if err := (Options{Kernel: Gaussian, Workers: 2, KernelCache: 1 << 20}).Validate(); err != nil {
		t.Error(err)
	}
	for _, o := range []SimOptions{{Emissions: -1}, {Workers: -1}, {MaxAngle: -0.1}, {MaxAngle: 2}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
		if _, err := Simulate(context.Background(), s, PaperPhantom(), o); err == nil {
			t.Errorf("Simulate took %+v", o)
		}
	}
	if err := (SimOptions{Emissions: 10, MaxAngle: math.Pi / 2}).Validate(); err != nil {
		t.Error(err)
	}
}
