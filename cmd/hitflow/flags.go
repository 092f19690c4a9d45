package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/tpx3"
	"github.com/hitflow/hitflow/plot"
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

// sensorFlags give the sensor the hits land on: a chip layout's, or a
// text input's size, whichever is larger.
type sensorFlags struct {
	layout        string
	width, height int
}

func (s *sensorFlags) add(f *pflag.FlagSet, sensorUsage string) {
	f.StringVar(&s.layout, "layout", s.layout, "chip placement of .tpx3 data: single, row or quad")
	f.Var(sizeFlag{&s.width, &s.height}, "sensor", sensorUsage)
}

// size returns the layout and the size of the sensor.
func (s *sensorFlags) size() (layout tpx3.Layout, width, height int, err error) {
	if layout, err = tpx3.LayoutByName(s.layout); err != nil {
		return layout, 0, 0, usageError{err}
	}
	return layout, max(s.width, layout.Width), max(s.height, layout.Height), nil
}

// inputFlags say how hit files are read.
type inputFlags struct {
	format string
	sensorFlags
}

var defaultInput = inputFlags{format: "auto", sensorFlags: defaultSensor}

var defaultSensor = sensorFlags{layout: "row", width: 256, height: 256}

func (in *inputFlags) add(f *pflag.FlagSet) {
	f.StringVar(&in.format, "format", in.format, "input format: auto, tpx3, t3pa, katherine or csv")
	in.sensorFlags.add(f, "sensor size of text inputs (linear pixel index width)")
}

// options returns the reader options and the size of the sensor the hits
// land on.
func (in *inputFlags) options() (opt tpx3.Options, width, height int, err error) {
	format, err := tpx3.ParseFormat(in.format)
	if err != nil {
		return opt, 0, 0, usageError{err}
	}
	layout, width, height, err := in.size()
	if err != nil {
		return opt, 0, 0, err
	}
	return tpx3.Options{Format: format, Layout: layout, Width: in.width, Height: in.height}, width, height, nil
}

// openSources opens the files as one stream and returns their total
// size; closeAll closes what was opened, also after an error. An empty
// file is worth a warning: a run split over files may have lost one.
func openSources(files []string, stderr io.Writer) (sources []pipeline.Source, total int64, closeAll func(), err error) {
	var opened []*os.File
	closeAll = func() {
		for _, f := range opened {
			f.Close()
		}
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, closeAll, err
		}
		opened = append(opened, f)
		var size int64
		if fi, err := f.Stat(); err == nil {
			size = fi.Size()
			if size == 0 && fi.Mode().IsRegular() {
				warnf(stderr, "%s is empty", name)
			}
		}
		total += size
		sources = append(sources, pipeline.Source{Name: name, R: f, Size: size})
	}
	return sources, total, closeAll, nil
}

// plotFormat returns the image format of a --plot file from its name:
// png or svg; "" when no plot is asked for.
func plotFormat(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	format, err := plot.FormatOf(name)
	if err != nil {
		return "", usagef("--plot %w", err)
	}
	return format, nil
}
