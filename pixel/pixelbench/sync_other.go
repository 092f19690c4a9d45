//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package pixelbench

// syncDisks does nothing where the system call is not offered: the timed
// runs there may share the disk with the previous run's write-back.
func syncDisks() {}
