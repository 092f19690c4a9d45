package hitflow

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyRules keeps the layout honest with go list.
func TestDependencyRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	if !strings.Contains(string(out), "github.com/hitflow/hitflow/pixel") {
		t.Fatal("go list did not list the module")
	}
	const mod = "github.com/hitflow/hitflow/"
	// What no algorithm imports: the layers above it, the measurement of
	// time for the timing policies, the devices, and the heavy I/O and
	// figure libraries.
	above := []string{mod + "format", mod + "plot", mod + "pixel/pipeline", mod + "cmd", mod + "internal/cputime", mod + "device", "github.com/ebitengine", "github.com/spf13",
		"github.com/apache", "go-hep.org", "gonum.org/v1/plot", mod + "online", "github.com/prometheus"}
	with := func(a []string, more ...string) []string { return append(append([]string{}, a...), more...) }
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		// Algorithms: no I/O beyond their own formats, no other domain.
		{"pixel", with(above, mod+"pixel/", mod+"clue", mod+"jpet")},
		{"pixel/tpx3", with(above, mod+"pixel/pixelsim", mod+"clue", mod+"jpet")},
		{"pixel/pixelsim", with(above, mod+"pixel/tpx3", mod+"clue", mod+"jpet")},
		{"pixel/pixelbench", with(above, mod+"pixel/tpx3", mod+"clue", mod+"jpet")},
		{"pixel/analysis", with(above, mod+"pixel/tpx3", mod+"pixel/pixelsim", mod+"clue", mod+"jpet")},
		{"clue", with(above, mod+"pixel", mod+"clue/", mod+"jpet")},
		{"clue/cluecsv", with(above, mod+"pixel", mod+"jpet")},
		{"clue/cluesim", with(above, mod+"pixel", mod+"jpet")},
		{"jpet", with(above, mod+"pixel", mod+"clue", mod+"jpet/")},
		// A domain's device package: its domain and the runtime.
		{"jpet/jpetcl", []string{mod + "pixel", mod + "clue", mod + "format", mod + "plot", mod + "cmd", "github.com/spf13"}},
		{"clue/cluecl", []string{mod + "pixel", mod + "jpet", mod + "format", mod + "plot", mod + "cmd", "github.com/spf13"}},
		{"pixel/pixelcl", []string{mod + "clue", mod + "jpet", mod + "pixel/pipeline", mod + "format", mod + "plot", mod + "cmd", "github.com/spf13"}},
		// Formats: per family, none importing another family, the
		// dispatch, the figures or the pipelines.
		{"format/text", []string{mod + "format/columnar", mod + "format/root", mod + "plot", mod + "pixel/pipeline", mod + "cmd", "github.com/spf13", "github.com/apache", "go-hep.org"}},
		{"format/columnar", []string{mod + "format/text", mod + "format/root", mod + "plot", mod + "pixel/pipeline", mod + "cmd", "github.com/spf13", "go-hep.org"}},
		{"format/root", []string{mod + "format/text", mod + "format/columnar", mod + "plot", mod + "pixel/pipeline", mod + "cmd", "github.com/spf13", "github.com/apache"}},
		{"format/nrrd", []string{mod + "format/text", mod + "format/columnar", mod + "format/root", mod + "format/tiff", mod + "plot", mod + "pixel/pipeline", mod + "cmd", "github.com/spf13", "github.com/apache", "go-hep.org"}},
		{"format/ev44", []string{mod + "format/text", mod + "format/columnar", mod + "format/root", mod + "format/nrrd", mod + "format/tiff", mod + "plot", mod + "pixel/pipeline", mod + "online", mod + "cmd", "github.com/spf13", "github.com/apache", "go-hep.org"}},
		{"format/tiff", []string{mod + "format/text", mod + "format/columnar", mod + "format/root", mod + "format/nrrd", mod + "plot", mod + "pixel", mod + "jpet", mod + "cmd", "github.com/spf13", "github.com/apache", "go-hep.org"}},
		{"format", []string{mod + "plot", mod + "pixel/pipeline", mod + "cmd", "github.com/spf13"}},
		// Figures draw; they do not read or write formats.
		{"plot", []string{mod + "format", mod + "pixel/pipeline", mod + "cmd", "github.com/spf13", "github.com/apache"}},
		// The device runtime knows no domain: the domains' device
		// packages use it.
		{"device/opencl", []string{mod + "pixel", mod + "clue", mod + "jpet", mod + "format", mod + "plot", mod + "cmd", "github.com/spf13"}},
		// Pipelines: stages and modes, whatever the output format.
		{"pixel/pipeline", []string{mod + "format", mod + "plot", mod + "device", mod + "cmd", "github.com/spf13", "github.com/prometheus"}},
		// Live inputs and monitoring feed the pipelines; no figures,
		// no devices, no CLI.
		{"online", []string{mod + "plot", mod + "device", mod + "cmd", "github.com/spf13"}},
		{"online/kafka", []string{mod + "plot", mod + "device", mod + "cmd", mod + "pixel/pipeline", "github.com/spf13"}},
	}
	for _, r := range rules {
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		for _, d := range strings.Fields(string(deps)) {
			for _, f := range r.forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s", r.pkg, d)
				}
			}
		}
	}
}
