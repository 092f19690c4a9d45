package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/pixel"
)

// timeFlag is a pflag.Value for durations on the pixel time grid.
type timeFlag struct{ t *pixel.Time }

// String names the duration in the largest unit that keeps it whole.
func (f timeFlag) String() string {
	if f.t == nil {
		return ""
	}
	t := *f.t
	for _, u := range []struct {
		unit pixel.Time
		name string
	}{{pixel.Second, "s"}, {pixel.Millisecond, "ms"}, {pixel.Microsecond, "us"}} {
		if t != 0 && t%u.unit == 0 {
			return fmt.Sprintf("%d%s", t/u.unit, u.name)
		}
	}
	return string(pixel.AppendNs(nil, t)) + "ns"
}

func (f timeFlag) Set(s string) error {
	t, err := pixel.ParseTime(s)
	if err != nil {
		return err
	}
	if t < 0 {
		return fmt.Errorf("negative duration %q", s)
	}
	*f.t = t
	return nil
}

func (timeFlag) Type() string { return "duration" }

// sizeFlag reads a sensor size "WxH".
type sizeFlag struct{ w, h *int }

func (f sizeFlag) String() string { return fmt.Sprintf("%dx%d", *f.w, *f.h) }

func (f sizeFlag) Set(s string) error {
	var w, h int
	if n, err := fmt.Sscanf(strings.ToLower(s), "%dx%d", &w, &h); n != 2 || err != nil || w < 1 || h < 1 {
		return fmt.Errorf("%q is not a sensor size like 256x256", s)
	}
	*f.w, *f.h = w, h
	return nil
}

func (sizeFlag) Type() string { return "WxH" }

// memoryFlag is a number of MiB, or "auto": half of the memory available
// when the program starts (2 GiB where the system does not say).
type memoryFlag struct{ bytes *int64 }

func (f memoryFlag) String() string {
	if f.bytes == nil {
		return ""
	}
	return strconv.FormatInt(*f.bytes>>20, 10)
}

func (f memoryFlag) Set(s string) error {
	if s == "auto" {
		*f.bytes = availableMemory() / 2
		return nil
	}
	mib, err := strconv.ParseInt(s, 10, 64)
	if err != nil || mib < 0 || mib > 1<<40 {
		return fmt.Errorf("%q is not a number of MiB or auto", s)
	}
	*f.bytes = mib << 20
	return nil
}

func (memoryFlag) Type() string { return "MiB|auto" }

// availableMemory reads MemAvailable from /proc/meminfo.
func availableMemory() int64 {
	const fallback = 4 << 30
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return fallback
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kib int64
			if _, err := fmt.Sscanf(rest, "%d kB", &kib); err == nil && kib > 0 {
				return kib << 10
			}
		}
	}
	return fallback
}
