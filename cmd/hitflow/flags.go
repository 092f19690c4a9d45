package main

import (
	"fmt"
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
