package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/device/opencl"
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
		}
	}
	if code, _, stderr := hitflow(t, "devices", "extra"); code != 2 || !strings.Contains(stderr, "takes no arguments") {
		t.Fatalf("devices extra: exit %d, %s", code, stderr)
	}
}
