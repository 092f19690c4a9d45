//go:build !linux

package prefault

// populate does nothing: the pages fault as they are written.
func populate([]byte) {}

// advise does nothing: huge pages come as the system gives them.
func advise([]byte) {}

// release does nothing: no huge pages were asked for.
func release([]byte) {}

// hugePage is 0: no huge pages are asked for.
func hugePage() int { return 0 }
