package jpetcl

import (
	"errors"
	"fmt"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/jpet"
)

// Reconstruction is list-mode MLEM on the CPU cores or on a device, for a
// caller that takes either.
type Reconstruction interface {
	Iterate() error
	Image() ([]float64, error) // row-major, row 0 at +y
	// KeptEvents is how many events have their kernel values kept between
	// iterations (the CPU's kernel cache; a device computes them anew).
	KeptEvents() int
	// Where says where it runs, for a summary line.
	Where() string
	Close() error
}

// New prepares the events on the CPU cores when dev is nil, else on the
// device of dev, which stays the caller's to close after the
// reconstruction, computing in precision p (the CPU: Double only).
func New(dev *opencl.Context, s jpet.Scanner, events []jpet.Event, opt jpet.Options, p Precision) (Reconstruction, error) {
	if dev == nil {
		if p != Double {
			return nil, fmt.Errorf("%s precision is for a device: the CPU computes in double", p)
		}
		r, err := jpet.NewReconstructor(s, events, opt)
		if err != nil {
			return nil, err
		}
		return cpu{r}, nil
	}
	r, err := NewReconstructor(dev, s, events, opt)
	if err != nil {
		return nil, err
	}
	if p == Double {
		return r, nil
	}
	if err := r.SetPrecision(p); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return r, nil
}

type cpu struct{ *jpet.Reconstructor }

func (c cpu) Iterate() error            { c.Reconstructor.Iterate(); return nil }
func (c cpu) Image() ([]float64, error) { return c.Reconstructor.Image(), nil }
func (c cpu) KeptEvents() int           { return c.CachedEvents() }
func (c cpu) Close() error              { return nil }
func (c cpu) Where() string {
	return fmt.Sprintf("cpu, kernel values kept for %d events", c.CachedEvents())
}

// KeptEvents is 0: the device computes every kernel value in every
// iteration.
func (r *Reconstructor) KeptEvents() int { return 0 }

// Where names the device, and says when the events are sent in batches.
func (r *Reconstructor) Where() string {
	where := r.ctx.Device.String()
	if r.precision == Single {
		where += ", kernel values in single precision"
	}
	if !r.resident {
		where += ", events sent in batches"
	}
	return where
}
