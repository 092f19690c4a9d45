package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/format/nrrd"
	"github.com/hitflow/hitflow/jpet"
)

// TestDevices lists the machine's OpenCL devices as --device names them.
func TestDevices(t *testing.T) {
	platforms, err := opencl.Platforms()
	if err != nil {
		if os.Getenv("HITFLOW_REQUIRE_OPENCL") == "1" {
			t.Fatalf("HITFLOW_REQUIRE_OPENCL=1 but %v", err)
		}
		t.Skipf("no OpenCL: %v", err)
	}
	code, stdout, stderr := hitflow(t, "devices")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range platforms {
		if !strings.Contains(stdout, fmt.Sprintf("platform %d: %s", p.Index, p.Name)) {
			t.Errorf("no line for platform %s:\n%s", p.Name, stdout)
		}
		for _, d := range p.Devices {
			if !strings.Contains(stdout, fmt.Sprintf("opencl:%d.%d  %s", d.Platform, d.Index, d.Name)) {
				t.Errorf("no line for %s:\n%s", d, stdout)
			}
			if d.FP64 && (!strings.Contains(stdout, "J-PET reconstruction: yes") || !strings.Contains(stdout, "CLUE: yes") || !strings.Contains(stdout, "pixel clustering: yes")) {
				t.Errorf("the kernels do not build on %s:\n%s", d, stdout)
			}
		}
	}
	if code, _, stderr := hitflow(t, "devices", "extra"); code != 2 || !strings.Contains(stderr, "takes no arguments") {
		t.Fatalf("devices extra: exit %d, %s", code, stderr)
	}
}

// TestPetOnDevice: pet reconstruct --device opencl gives the CPU's image
// (to the float32 of the NRRD file) and names the device; bench pet times
// the device; a --device that names none is a usage error.
func TestPetOnDevice(t *testing.T) {
	if code, _, stderr := hitflow(t, "pet", "reconstruct", "x.bin", "--device", "cuda", "-o", "r"); code != 2 || !strings.Contains(stderr, "--device cuda: want cpu, opencl or opencl:P.D") {
		t.Fatalf("--device cuda: exit %d, %s", code, stderr)
	}
	requireOpenCL(t)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "ph")
	if code, _, stderr := hitflow(t, "pet", "simulate", "--emissions", "5000", "--seed", "2", "-o", prefix); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	var images [3]jpet.Image
	for i, run := range []struct{ device, precision string }{{"cpu", "double"}, {"opencl", "double"}, {"opencl", "single"}} {
		out := filepath.Join(dir, run.device+run.precision)
		code, _, stderr := hitflow(t, "pet", "reconstruct", prefix+".bin", "--iterations", "3", "--png-every", "0", "--sensitivity",
			"--device", run.device, "--precision", run.precision, "-o", out)
		if code != 0 {
			t.Fatalf("%+v: exit %d, %s", run, code, stderr)
		}
		if run.device == "opencl" && !strings.Contains(stderr, "3 iterations on opencl:") {
			t.Errorf("the summary does not name the device: %s", stderr)
		}
		if single := strings.Contains(stderr, "single precision"); single != (run.precision == "single") {
			t.Errorf("%+v: the summary says single precision %v: %s", run, single, stderr)
		}
		f, err := os.Open(out + ".nrrd")
		if err != nil {
			t.Fatal(err)
		}
		images[i], err = nrrd.ReadImage(f, out+".nrrd")
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	peak := slices.Max(images[0].Values)
	for p, want := range images[0].Values {
		if got := images[1].Values[p]; math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Fatalf("pixel %d: %v on the device, %v on the CPU", p, got, want)
		}
		if got := images[2].Values[p]; want > 1e-3*peak && math.Abs(got-want) > 1e-5*want {
			t.Fatalf("pixel %d: %v on the device in single precision, %v on the CPU", p, got, want)
		}
	}
	for _, c := range []struct{ args, want string }{
		{"--precision single", "--precision single needs --device opencl"},
		{"--device opencl --precision half", `--precision: precision "half": want double or single`},
	} {
		args := append([]string{"pet", "reconstruct", prefix + ".bin", "-o", filepath.Join(dir, "x")}, strings.Fields(c.args)...)
		if code, _, stderr := hitflow(t, args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Fatalf("%s: exit %d, %s", c.args, code, stderr)
		}
	}
	code, stdout, stderr := hitflow(t, "bench", "pet", "--events", "1000", "--device", "opencl", "--iterations", "2")
	if code != 0 || strings.Count(stdout, "| 1000 |") != 4 || strings.Count(stdout, "| device, single precision |") != 2 || !strings.Contains(stdout, "Device: opencl:") ||
		!strings.Contains(stdout, "next iterations (s, median of 2)") {
		t.Fatalf("bench pet --device opencl: exit %d, %s%s", code, stdout, stderr)
	}
	if code, _, stderr := hitflow(t, "bench", "pet", "--iterations", "0"); code != 2 || !strings.Contains(stderr, "--iterations must be positive") {
		t.Fatalf("bench pet --iterations 0: exit %d, %s", code, stderr)
	}
}

// TestPetDeviceMissing: a device that is not there (or no OpenCL at all)
// fails before the events are read, and writes nothing.
func TestPetDeviceMissing(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "ph")
	if code, _, stderr := hitflow(t, "pet", "simulate", "--emissions", "2000", "-o", prefix); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	out := filepath.Join(dir, "rec")
	code, _, stderr := hitflow(t, "pet", "reconstruct", prefix+".bin", "--device", "opencl:99.0", "-o", out)
	if code != 1 || !strings.Contains(stderr, "opencl") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out + ".nrrd"); !os.IsNotExist(err) {
		t.Fatalf("an image was written: %v", err)
	}
	if c, p, k, b, e := opencl.Live(); c+p+k+b+e != 0 {
		t.Fatalf("left on the device: %d %d %d %d %d", c, p, k, b, e)
	}
}

// requireOpenCL skips the test without an OpenCL device, unless
// HITFLOW_REQUIRE_OPENCL=1 (CI).
func requireOpenCL(t *testing.T) {
	t.Helper()
	if _, err := opencl.Select("opencl"); err != nil {
		if os.Getenv("HITFLOW_REQUIRE_OPENCL") == "1" {
			t.Fatalf("HITFLOW_REQUIRE_OPENCL=1 but %v", err)
		}
		t.Skipf("no OpenCL: %v", err)
	}
}

// TestClueOnDevice: clue --device opencl writes the CPU's output to the
// byte on the shared datasets (2D and 3D, flat and Gaussian kernels) and
// names the device; bench clue times it; --workers is for the CPU.
func TestClueOnDevice(t *testing.T) {
	if code, _, stderr := hitflow(t, "clue", "--dc", "1", "--rhoc", "1", "--device", "opencl", "--workers", "2", "x.csv"); code != 2 || !strings.Contains(stderr, "--workers is for --device cpu") {
		t.Fatalf("--workers with a device: exit %d, %s", code, stderr)
	}
	requireOpenCL(t)
	dir := t.TempDir()
	// Many small events in one file, as a calorimeter's readout gives
	// them.
	events := filepath.Join(dir, "events.csv")
	var b strings.Builder
	b.WriteString("event,x,y,layer,weight\n")
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		fmt.Fprintf(&b, "%d,%g,%g,%d,%d\n", i%40*3, r.NormFloat64()*4+float64(i%3)*10, r.NormFloat64()*4, i%5, 1+r.IntN(3))
	}
	os.WriteFile(events, []byte(b.String()), 0o644)
	data := "../../../shared/data/clue/"
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"sissa_4000.csv", []string{"--dc", "20", "--rhoc", "10"}},
		{"toyDetector_10000.csv", []string{"--dc", "2.5", "--rhoc", "2", "--deltac", "7.5", "--deltao", "7.5"}},
		{"blob.csv", []string{"--dc", "1", "--rhoc", "5", "--deltac", "2", "--deltao", "2", "--kernel", "gaussian:0.5"}},
		{"data_dim_3.csv", []string{"--dc", "3", "--rhoc", "4", "--kernel", "exponential:0.7"}},
		{events, []string{"--dc", "2", "--rhoc", "4", "--deltac", "3", "--deltao", "3"}},
	} {
		path := data + tc.file
		if filepath.IsAbs(tc.file) {
			path = tc.file
		}
		if _, err := os.Stat(path); err != nil {
			t.Skip("no shared data:", err)
		}
		var outs [2][]byte
		for i, device := range []string{"cpu", "opencl"} {
			out := filepath.Join(dir, device+"_"+filepath.Base(tc.file))
			code, _, stderr := hitflow(t, append([]string{"clue", "--device", device, "-o", out, path}, tc.args...)...)
			if code != 0 || device == "opencl" && !strings.Contains(stderr, "(opencl:") {
				t.Fatalf("%s on %s: exit %d, %s", tc.file, device, code, stderr)
			}
			outs[i], _ = os.ReadFile(out)
		}
		if !bytes.Equal(outs[0], outs[1]) || len(outs[0]) < 1000 {
			t.Errorf("%s: the device's output (%d bytes) differs from the CPU's (%d)", tc.file, len(outs[1]), len(outs[0]))
		}
	}
	code, stdout, stderr := hitflow(t, "bench", "clue", "--steps", "1", "--repeat", "1", "--device", "opencl")
	if code != 0 || !strings.Contains(stdout, "| 100000 | device |") || !strings.Contains(stdout, "Device: opencl:") {
		t.Fatalf("bench clue on the device: exit %d, %s%s", code, stdout, stderr)
	}
	code, stdout, stderr = hitflow(t, "bench", "clue", "--events", "3", "--steps", "1", "--repeat", "1", "--device", "opencl")
	if code != 0 || !strings.Contains(stdout, "| 3 | 300000 | device |") || !strings.Contains(stdout, "| 3 | 300000 | cpu,") {
		t.Fatalf("bench clue --events on the device: exit %d, %s%s", code, stdout, stderr)
	}
}

// TestClusterOnDevice: cluster --mode chunked --device opencl writes the
// CPU's bytes (the real quad run and the built-in sample, with the hits
// of each cluster) and names the device; a mode or definition the device
// does not cluster is a usage error; bench pixel adds the device's rows.
func TestClusterOnDevice(t *testing.T) {
	for _, c := range []struct{ args, want []string }{
		{[]string{"--device", "opencl"}, []string{"--mode chunked, not auto"}},
		{[]string{"--device", "opencl", "--mode", "chunked", "--definition", "global"}, []string{"the global definition runs on the CPU cores"}},
		{[]string{"--device", "gpu", "--mode", "chunked"}, []string{"want cpu, opencl or opencl:P.D"}},
	} {
		code, _, stderr := hitflow(t, append([]string{"cluster", "-o", filepath.Join(t.TempDir(), "x.csv")}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want[0]) {
			t.Fatalf("%v: exit %d, %s", c.args, code, stderr)
		}
	}
	requireOpenCL(t)
	dir := t.TempDir()
	quad := "../../../shared/data/tpx3/greg_220ms_TDC_GDC_enabled_20230214_3.tpx3"
	// A readout out of order sorts its batches on the device.
	disordered := filepath.Join(dir, "disordered.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "200000", "--rate", "40", "--disorder", "50us", "-o", disordered); code != 0 {
		t.Fatal(stderr)
	}
	for _, in := range [][]string{{"--layout", "quad", quad}, nil, {disordered}} {
		if len(in) > 0 {
			if _, err := os.Stat(quad); err != nil {
				continue
			}
		}
		var outs [2][]byte
		for i, device := range []string{"cpu", "opencl"} {
			out, hits := filepath.Join(dir, device+".csv"), filepath.Join(dir, device+"_hits.csv")
			code, _, stderr := hitflow(t, append([]string{"cluster", "-q", "--mode", "chunked", "--device", device, "-o", out, "--hits", hits}, in...)...)
			if code != 0 || device == "opencl" && !strings.Contains(stderr, "chunks clustered on opencl:") {
				t.Fatalf("%v on %s: exit %d, %s", in, device, code, stderr)
			}
			if sorted := regexp.MustCompile(`, ([1-9][0-9]*) batches sorted there`).FindStringSubmatch(stderr); device == "opencl" && slices.Contains(in, disordered) && sorted == nil {
				t.Fatalf("%v on %s: no batch sorted on the device: %s", in, device, stderr)
			}
			a, _ := os.ReadFile(out)
			b, _ := os.ReadFile(hits)
			outs[i] = append(a, b...)
		}
		if !bytes.Equal(outs[0], outs[1]) || len(outs[0]) < 1000 {
			t.Errorf("%v: the device's outputs (%d bytes) differ from the CPU's (%d)", in, len(outs[1]), len(outs[0]))
		}
	}
	code, stdout, stderr := hitflow(t, "bench", "pixel", "--device", "opencl", "--datasets", "gamma", "--modes", "chunked", "--hits", "20000", "--repeat", "1", "--runs", "1", "--e2e-hits", "20000")
	// The end-to-end rows, and a clustering-only row with the closed
	// clusters summed on each side.
	if code != 0 || strings.Count(stdout, "| chunked, device |") != 4 || !strings.Contains(stdout, "| chunked, device, sums on the device |") ||
		!strings.Contains(stdout, "| chunked, device, sums on the host |") {
		t.Fatalf("bench pixel on the device: exit %d, %s%s", code, stdout, stderr)
	}
}
