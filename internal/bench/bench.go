// Package bench holds the benchmark harnesses of "hitflow bench": what
// each one times, how, and the Markdown tables it prints. They reproduce
// the papers' measurements (CLUE's Table 1, the pixel clustering of
// Čelko et al., J-PET's MLEM iterations) on the machine at hand; the
// command line only parses flags and calls them.
package bench

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

// Version is the version and the Go release, which names the Go
// experiments of the build ("-X:simd" for the vector code of CLUE and
// J-PET): benchmark numbers depend on it.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "hitflow (devel)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	return fmt.Sprintf("hitflow %s %s", v, bi.GoVersion)
}

// header starts a benchmark's output with what its numbers depend
// on: the build (vector code or not) and the machine.
func header(w io.Writer) {
	fmt.Fprintf(w, "%s, %s/%s, %d CPUs, GOMAXPROCS %d\n\n", Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0))
}

// median is the middle of the durations (the upper one of an even count).
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
