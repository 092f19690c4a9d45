//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cputime

import (
	"syscall"
	"time"
)

// Process returns the CPU time the process has used (user and system),
// or -1 when it cannot tell.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
