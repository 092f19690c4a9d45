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
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"pixel", []string{mod + "pixel/", mod + "output", mod + "cmd", "github.com/spf13", "go-hep.org", "github.com/apache"}},
		{"pixel/tpx3", []string{mod + "pixel/pixelsim", mod + "pixel/pipeline", mod + "output", mod + "cmd", "github.com/spf13"}},
		{"pixel/pixelsim", []string{mod + "pixel/tpx3", mod + "pixel/pipeline", mod + "output", mod + "cmd", "github.com/spf13"}},
		{"pixel/pipeline", []string{mod + "output", mod + "cmd", "github.com/spf13"}},
		{"pixel/pixelbench", []string{mod + "pixel/tpx3", mod + "pixel/pipeline", mod + "output", mod + "cmd", "github.com/spf13"}},
		{"output", []string{mod + "cmd", "github.com/spf13"}},
		{"clue", []string{mod + "pixel", mod + "clue/", mod + "output", mod + "cmd", "github.com/spf13", "gonum.org/v1/plot"}},
		{"clue/cluecsv", []string{mod + "pixel", mod + "output", mod + "cmd", "github.com/spf13"}},
		{"clue/cluesim", []string{mod + "pixel", mod + "output", mod + "cmd", "github.com/spf13"}},
		{"pixel/tpx3", []string{mod + "clue", mod + "jpet"}},
		{"jpet", []string{mod + "pixel", mod + "clue", mod + "output", mod + "cmd", "github.com/spf13", "gonum.org/v1/plot"}},
		{"clue", []string{mod + "jpet"}},
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
