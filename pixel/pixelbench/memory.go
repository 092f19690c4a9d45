package pixelbench

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// MemoryWatch samples the memory the Go runtime holds from the operating
// system (mapped read-write and not released: its part of the resident
// set) until Stop, which returns the highest sample above the first.
type MemoryWatch struct {
	start uint64
	stop  chan struct{}
	peak  chan uint64
}

// WatchMemory starts a watch that samples every interval. It first gives
// back to the operating system what the runtime can, so that the peak is
// what the work watched takes, not what earlier work left mapped.
func WatchMemory(every time.Duration) *MemoryWatch {
	debug.FreeOSMemory()
	m := &MemoryWatch{start: heldMemory(), stop: make(chan struct{}), peak: make(chan uint64)}
	go func() {
		peak := m.start
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				peak = max(peak, heldMemory())
			case <-m.stop:
				// A last sample: what is still held at the end counts.
				m.peak <- max(peak, heldMemory())
				return
			}
		}
	}()
	return m
}

// Stop ends the watch and returns the peak in bytes above the memory held
// when it started.
func (m *MemoryWatch) Stop() uint64 {
	close(m.stop)
	return <-m.peak - m.start
}

// heldMemory returns the bytes the runtime has mapped and not released.
func heldMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}
