package opencl

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// device opens the device the tests run on, or skips the test where the
// machine has no OpenCL; HITFLOW_REQUIRE_OPENCL=1 (CI) makes that a
// failure.
func device(t *testing.T) *Context {
	t.Helper()
	d, err := Select("opencl")
	if err != nil {
		if os.Getenv("HITFLOW_REQUIRE_OPENCL") == "1" {
			t.Fatalf("HITFLOW_REQUIRE_OPENCL=1 but %v", err)
		}
		t.Skipf("no OpenCL device: %v", err)
	}
	c, err := d.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		if ctx, p, k, b, e := Live(); ctx != 0 || p != 0 || k != 0 || b != 0 || e != 0 {
			t.Errorf("left behind: %d contexts, %d programs, %d kernels, %d buffers, %d events", ctx, p, k, b, e)
		}
	})
	return c
}

const scale = `
__kernel void scale(__global float *v, float f, int n) {
	int i = get_global_id(0);
	if (i < n) v[i] = v[i] * f + (float)i;
}
`

// scaleKernel builds the kernel scale (not from the cache), released at
// the test's end.
func scaleKernel(t *testing.T, c *Context) *Kernel {
	t.Helper()
	CacheDir = ""
	prog, err := c.Build(scale, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("scale")
	if err != nil {
		prog.Release()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := errors.Join(k.Release(), prog.Release()); err != nil {
			t.Error(err)
		}
	})
	return k
}

func TestRunKernel(t *testing.T) {
	c := device(t)
	CacheDir = t.TempDir()
	for round := range 2 { // compiled, then from the cache
		prog, err := c.Build(scale, "")
		if err != nil {
			t.Fatal(err)
		}
		if prog.Cached != (round == 1) {
			t.Errorf("round %d: cached %v", round, prog.Cached)
		}
		k, err := prog.Kernel("scale")
		if err != nil {
			t.Fatal(err)
		}
		const n = 1000
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i) / 4
		}
		buf, err := c.NewBuffer(4*n, ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(buf, 0, v); err != nil {
			t.Fatal(err)
		}
		if err := k.SetArgs(buf, float32(3), int32(n)); err != nil {
			t.Fatal(err)
		}
		if g, err := k.MaxGroup(); err != nil || g < 1 || g > c.Device.MaxWorkGroup {
			t.Errorf("the kernel's largest work-group: %d, %v (the device's: %d)", g, err, c.Device.MaxWorkGroup)
		}
		if _, err := k.Run([]int{1024}, nil); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, n)
		if err := Read(buf, 0, got); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if want := float32(i)/4*3 + float32(i); got[i] != want {
				t.Fatalf("v[%d] = %v, want %v", i, got[i], want)
			}
		}
		if err := errors.Join(buf.Release(), k.Release(), prog.Release()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuildErrorHasTheLog(t *testing.T) {
	c := device(t)
	CacheDir = ""
	_, err := c.Build("__kernel void broken(__global float *v) { v[0] = undeclared; }", "")
	var be *BuildError
	if !errors.As(err, &be) || !strings.Contains(be.Log, "undeclared") {
		t.Fatalf("error %v, want a BuildError whose log names the undeclared identifier", err)
	}
	var ce *Error
	if !errors.As(err, &ce) || CodeName(ce.Code) != "CL_BUILD_PROGRAM_FAILURE" {
		t.Fatalf("error %v, want CL_BUILD_PROGRAM_FAILURE", err)
	}
}

func TestFailuresAreErrors(t *testing.T) {
	c := device(t)
	CacheDir = ""
	prog, err := c.Build(scale, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	if _, err := prog.Kernel("missing"); err == nil || !strings.Contains(err.Error(), "CL_INVALID_KERNEL_NAME") {
		t.Fatalf("missing kernel: %v", err)
	}
	k, err := prog.Kernel("scale")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	if err := k.SetArgs("text"); err == nil {
		t.Fatal("a string taken as a kernel argument")
	}
	if _, err := c.NewBuffer(int(min(c.Device.MaxAlloc+1, 1<<62)), ReadWrite); err == nil {
		t.Fatal("a buffer larger than the device allows")
	}
	buf, err := c.NewBuffer(64, ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	if err := Write(buf, 60, []float32{1, 2}); err == nil {
		t.Fatal("a write past the buffer's end")
	}
	// A device lost in the middle of a run: the command says so.
	k.SetArgs(buf, float32(1), int32(16))
	c.InjectFailure(ErrLost)
	if _, err := k.Run([]int{16}, nil); !errors.Is(err, ErrLost) {
		t.Fatalf("injected failure: %v", err)
	}
	if _, err := k.Run([]int{16}, nil); err != nil {
		t.Fatalf("after the injected failure: %v", err)
	}
}

func TestPlatformsDescribeDevices(t *testing.T) {
	c := device(t)
	d := c.Device
	if d.Name == "" || d.ComputeUnits < 1 || d.GlobalMem <= 0 || d.MaxAlloc <= 0 || d.LocalMem <= 0 || d.MaxWorkGroup < 1 || d.Version == "" {
		t.Fatalf("device %+v", d)
	}
	again, err := Select(strings.Fields(d.String())[0])
	if err != nil || again.Name != d.Name {
		t.Fatalf("Select(%q) = %v, %v", strings.Fields(d.String())[0], again, err)
	}
}

func TestSelectSyntax(t *testing.T) {
	for _, spec := range []string{"cuda", "opencl:", "opencl:1", "opencl:a.b", "opencl:-1.0", "openclx"} {
		if _, err := Select(spec); err == nil || !strings.Contains(err.Error(), spec) {
			t.Errorf("Select(%q): %v", spec, err)
		}
	}
}

func TestMissingLibrary(t *testing.T) {
	_, err := load("/nonexistent/libOpenCL.so.1")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/libOpenCL.so.1") || !strings.Contains(err.Error(), "pocl-opencl-icd") {
		t.Fatalf("error %v", err)
	}
}

func TestCodeName(t *testing.T) {
	for code, want := range map[int32]string{0: "CL_SUCCESS", -5: "CL_OUT_OF_RESOURCES", -11: "CL_BUILD_PROGRAM_FAILURE",
		-54: "CL_INVALID_WORK_GROUP_SIZE", -72: "CL_MAX_SIZE_RESTRICTION_EXCEEDED", -1001: "CL_PLATFORM_NOT_FOUND_KHR", -20: "unknown error", 3: "unknown error"} {
		if got := CodeName(code); got != want {
			t.Errorf("CodeName(%d) = %s, want %s", code, got, want)
		}
	}
}

// TestBuffers: a named buffer is the last one while large enough, an
// eighth larger when grown, and Release frees them all.
func TestBuffers(t *testing.T) {
	c := device(t)
	_, _, _, before, _ := Live()
	bufs := c.NewBuffers()
	a, err := bufs.Get("a", 800)
	if err != nil || a.Size != 900 {
		t.Fatalf("first: %v bytes, %v", a.Size, err)
	}
	if again, err := bufs.Get("a", 900); err != nil || again != a {
		t.Fatalf("within its size: a new buffer (%v)", err)
	}
	grown, err := bufs.Get("a", 1600)
	if err != nil || grown == a || grown.Size != 1800 || a.mem != 0 {
		t.Fatalf("grown: %d bytes, the old one released %v, %v", grown.Size, a.mem == 0, err)
	}
	if _, err := bufs.Get("b", 0); err != nil {
		t.Fatal(err)
	}
	if _, _, _, n, _ := Live(); n != before+2 {
		t.Fatalf("%d buffers live, want %d", n, before+2)
	}
	if err := bufs.Release(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, n, _ := Live(); n != before {
		t.Fatalf("%d buffers live after Release, want %d", n, before)
	}
}

// TestAsyncTransfers: an upload and a download queued with their events
// happen in the order the events give, beside a kernel on its own queue,
// and a download past the buffer's end or of nothing is refused.
func TestAsyncTransfers(t *testing.T) {
	c := device(t)
	k := scaleKernel(t, c)
	const n = 1 << 16
	a, errA := c.NewBuffer(4*n, ReadWrite)
	b, errB := c.NewBuffer(4*n, ReadWrite)
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := errors.Join(a.Release(), b.Release()); err != nil {
			t.Error(err)
		}
	}()
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	up, err := WriteAsync(a, 0, in)
	if err != nil {
		t.Fatal(err)
	}
	// The kernel scales b meanwhile, on the kernels' queue.
	if err := errors.Join(Write(b, 0, in), k.SetArgs(b, float32(2), int32(n))); err != nil {
		t.Fatal(err)
	}
	ran, err := k.Start([]int{n}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Half of a back, after its upload; all of b, after the kernel.
	half, all := make([]float32, n/2), make([]float32, n)
	downA, errA := ReadAsync(a, 4*n/2, half, up)
	downB, errB := ReadAsync(b, 0, all, ran)
	if err := errors.Join(errA, errB, downA.Wait(), downB.Wait(), up.Release(), ran.Release()); err != nil {
		t.Fatal(err)
	}
	for i := range half {
		if half[i] != float32(n/2+i) {
			t.Fatalf("a[%d] = %v, want %v", n/2+i, half[i], n/2+i)
		}
	}
	for i := range all {
		if want := float32(i)*2 + float32(i); all[i] != want {
			t.Fatalf("b[%d] = %v, want %v", i, all[i], want)
		}
	}
	if _, err := ReadAsync(a, 4*n-4, half); err == nil {
		t.Fatal("a download past the buffer's end")
	}
	if _, err := ReadAsync(a, 0, []float32{}); err == nil {
		t.Fatal("an empty download")
	}
	c.InjectFailure(ErrLost)
	if _, err := ReadAsync(a, 0, half); !errors.Is(err, ErrLost) {
		t.Fatalf("injected failure: %v", err)
	}
}

// TestPinned: values staged in pinned memory go to the device and come
// back into pinned memory, by queued transfers; views check their
// bounds; nothing is left behind.
func TestPinned(t *testing.T) {
	c := device(t)
	k := scaleKernel(t, c)
	const n = 1 << 12
	in, errI := c.NewPinned(4 * n)
	out, errO := c.NewPinned(8 + 4*n)
	buf, errB := c.NewBuffer(4*n, ReadWrite)
	if err := errors.Join(errI, errO, errB); err != nil {
		t.Fatal(err)
	}
	v := Slice[float32](in, 0, n)
	for i := range v {
		v[i] = float32(i)
	}
	up, err := WriteAsync(buf, 0, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SetArgs(buf, float32(2), int32(n)); err != nil {
		t.Fatal(err)
	}
	ran, err := k.Start([]int{n}, nil, up)
	if err != nil {
		t.Fatal(err)
	}
	got := Slice[float32](out, 8, n)
	down, err := ReadAsync(buf, 0, got, ran)
	if err := errors.Join(err, down.Wait(), up.Release(), ran.Release()); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if want := float32(i)*2 + float32(i); got[i] != want {
			t.Fatalf("value %d: %v, want %v", i, got[i], want)
		}
	}
	for _, bad := range []func(){func() { Slice[float64](out, 4, 1) }, func() { Slice[float32](out, 8, n+3) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a view out of bounds or misaligned")
				}
			}()
			bad()
		}()
	}
	if err := errors.Join(in.Release(), out.Release(), in.Release(), buf.Release()); err != nil {
		t.Fatal(err)
	}
}
