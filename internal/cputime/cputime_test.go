package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessCountsWork: computing on this goroutine makes the process's
// CPU time grow (by 40 ms within 10 s of wall time, other tests running
// beside it), and by no more than the wall time on every core.
func TestProcessCountsWork(t *testing.T) {
	before := Process()
	if before < 0 {
		t.Skip("the CPU time is not known on", runtime.GOOS)
	}
	start := time.Now()
	x := uint64(1)
	used := time.Duration(0)
	for used < 40*time.Millisecond && time.Since(start) < 10*time.Second {
		for range 100000 {
			x = x*6364136223846793005 + 1
		}
		used = Process() - before
	}
	wall := time.Since(start)
	if used < 40*time.Millisecond || used > time.Duration(runtime.NumCPU())*wall+10*time.Millisecond {
		t.Fatalf("%v of CPU in %v of computing (x %d)", used, wall, x)
	}
}
