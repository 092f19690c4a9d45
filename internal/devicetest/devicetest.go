// Package devicetest opens the OpenCL device the tests of the device
// packages run on.
package devicetest

import (
	"os"
	"testing"

	"github.com/hitflow/hitflow/device/opencl"
)

// Open opens the first OpenCL device, or skips the test without one
// unless HITFLOW_REQUIRE_OPENCL=1 (CI); at the end it closes it and
// checks that nothing was left on the device.
func Open(t testing.TB) *opencl.Context {
	t.Helper()
	d, err := opencl.Select("opencl")
	if err != nil {
		if os.Getenv("HITFLOW_REQUIRE_OPENCL") == "1" {
			t.Fatalf("HITFLOW_REQUIRE_OPENCL=1 but %v", err)
		}
		t.Skipf("no OpenCL device: %v", err)
	}
	ctx, err := d.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Error(err)
		}
		if c, p, k, b, e := opencl.Live(); c+p+k+b+e != 0 {
			t.Errorf("left on the device: %d contexts, %d programs, %d kernels, %d buffers, %d events", c, p, k, b, e)
		}
	})
	return ctx
}
