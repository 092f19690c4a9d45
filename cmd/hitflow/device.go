package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/jpet/jpetcl"
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

// reconstruction is MLEM on the CPU cores or on a device.
type reconstruction interface {
	Iterate() error
	Image() ([]float64, error)
	Close() error
	// Where says where it ran, for the summary line.
	Where() string
}

// newReconstruction prepares the events on the CPU cores (dev nil) or on
// the device, which it then owns.
func newReconstruction(dev *opencl.Context, s jpet.Scanner, events []jpet.Event, opt jpet.Options) (reconstruction, error) {
	if dev == nil {
		r, err := jpet.NewReconstructor(s, events, opt)
		if err != nil {
			return nil, usageError{err}
		}
		return cpuReconstruction{r}, nil
	}
	r, err := jpetcl.NewReconstructor(dev, s, events, opt)
	if err != nil {
		return nil, errors.Join(err, dev.Close())
	}
	return deviceReconstruction{r, dev}, nil
}

type cpuReconstruction struct{ *jpet.Reconstructor }

func (c cpuReconstruction) Iterate() error            { c.Reconstructor.Iterate(); return nil }
func (c cpuReconstruction) Image() ([]float64, error) { return c.Reconstructor.Image(), nil }
func (c cpuReconstruction) Close() error              { return nil }
func (c cpuReconstruction) Where() string {
	return fmt.Sprintf("cpu, kernel values kept for %d events", c.CachedEvents())
}

type deviceReconstruction struct {
	*jpetcl.Reconstructor
	ctx *opencl.Context
}

func (d deviceReconstruction) Close() error {
	return errors.Join(d.Reconstructor.Close(), d.ctx.Close())
}
func (d deviceReconstruction) Where() string {
	where := d.ctx.Device.String()
	if !d.Resident() {
		where += ", events sent in batches"
	}
	return where
}
