//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pixel

import "time"

// processCPU returns -1: the process's CPU time is not known here, and
// auto mode always tries both clusterers.
func processCPU() time.Duration { return -1 }
