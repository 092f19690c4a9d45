package jpetcl

import (
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
// reconstruction.
func New(dev *opencl.Context, s jpet.Scanner, events []jpet.Event, opt jpet.Options) (Reconstruction, error) {
	if dev == nil {
		r, err := jpet.NewReconstructor(s, events, opt)
		if err != nil {
			return nil, err
		}
		return cpu{r}, nil
	}
	return NewReconstructor(dev, s, events, opt)
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
	if !r.resident {
		where += ", events sent in batches"
	}
	return where
}
