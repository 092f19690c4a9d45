package main

import (
	"errors"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/device/opencl"
)

// deviceFlag registers --device.
func deviceFlag(f *pflag.FlagSet, device *string) {
	*device = "cpu"
	f.StringVar(device, "device", *device, "where to run: cpu, opencl (the first GPU, else the first device) or opencl:P.D (see hitflow devices)")
}

// checkDevice refuses a --device value that names no kind of device.
func checkDevice(device string) error {
	if device != "cpu" && !strings.HasPrefix(device, "opencl") {
		return usagef("--device %s: want cpu, opencl or opencl:P.D", device)
	}
	return nil
}

// openDevice opens the OpenCL device a --device value names.
func openDevice(device string) (*opencl.Context, error) {
	d, err := opencl.Select(device)
	if err != nil {
		if strings.Contains(err.Error(), "want opencl") {
			return nil, usageError{err}
		}
		return nil, err
	}
	return d.Open()
}

// openOn opens the device a --device value names and what open builds
// on it (pixelcl.New, pixelcl.NewSorter), and returns what closes both.
func openOn[T interface{ Close() error }](device string, open func(*opencl.Context) (T, error)) (T, func() error, error) {
	var none T
	dev, err := openDevice(device)
	if err != nil {
		return none, nil, err
	}
	v, err := open(dev)
	if err != nil {
		return none, nil, errors.Join(err, dev.Close())
	}
	return v, func() error { return errors.Join(v.Close(), dev.Close()) }, nil
}
