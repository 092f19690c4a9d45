//go:build linux || darwin || freebsd || netbsd || openbsd

package pixelbench

import "syscall"

func syncDisks() { syscall.Sync() }
