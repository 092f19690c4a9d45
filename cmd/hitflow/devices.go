package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/clue/cluecl"
	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/jpet/jpetcl"
	"github.com/hitflow/hitflow/pixel/pixelcl"
)

func newDevicesCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "devices",
		Short: "List the OpenCL platforms and devices",
		Long: `List every OpenCL platform and device of the machine, numbered as
--device opencl:P.D names them: name, vendor, type, compute units, memory,
work-group size, double precision, versions, and whether hitflow's
kernels build on it. OpenCL is loaded at run
time (libOpenCL.so.1, the ICD loader; HITFLOW_OPENCL_LIBRARY names another):
without it, or without a driver, this says what is missing, and every
command that does not ask for a device runs as before.`,
		Example: "  hitflow devices",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDevices(cmd.Context(), stdout)
		},
	}
}

func runDevices(ctx context.Context, stdout io.Writer) error {
	if err := prepare(ctx, nil); err != nil {
		return err
	}
	platforms, err := opencl.Platforms()
	if err != nil {
		return err
	}
	for _, p := range platforms {
		fmt.Fprintf(stdout, "platform %d: %s (%s, %s)\n", p.Index, p.Name, p.Vendor, p.Version)
		if len(p.Devices) == 0 {
			fmt.Fprintf(stdout, "  no devices\n")
		}
		for _, d := range p.Devices {
			fp64 := "no"
			if d.FP64 {
				fp64 = "yes"
			}
			fmt.Fprintf(stdout, "  opencl:%d.%d  %s\n", d.Platform, d.Index, d.Name)
			fmt.Fprintf(stdout, "    vendor %s, type %s, %d compute units, work-groups up to %d, fp64 %s\n",
				d.Vendor, d.Type, d.ComputeUnits, d.MaxWorkGroup, fp64)
			fmt.Fprintf(stdout, "    memory %s (%s in one buffer), local %s\n", bytesText(d.GlobalMem), bytesText(d.MaxAlloc), bytesText(d.LocalMem))
			fmt.Fprintf(stdout, "    %s, driver %s\n", d.Version, d.Driver)
			for _, k := range kernelsBuild(d) {
				fmt.Fprintf(stdout, "    %s: %s\n", k.what, k.builds)
			}
		}
	}
	return nil
}

// built says whether a part of hitflow's kernels builds on a device.
type built struct{ what, builds string }

// kernelsBuild says whether hitflow's kernels build on d: J-PET's, CLUE's
// and the pixel clustering's (its chunk step and its reorder stage's
// sort).
func kernelsBuild(d opencl.Device) []built {
	checks := []struct {
		what  string
		check func(*opencl.Context) error
	}{
		{"J-PET reconstruction", jpetcl.Check},
		{"CLUE", func(ctx *opencl.Context) error { return closeAfter(cluecl.New(ctx)) }},
		{"pixel clustering", func(ctx *opencl.Context) error {
			return errors.Join(closeAfter(pixelcl.New(ctx)), closeAfter(pixelcl.NewSorter(ctx)))
		}},
	}
	out := make([]built, len(checks))
	ctx, err := d.Open()
	for i, c := range checks {
		out[i].what, out[i].builds = c.what, "yes"
		if err == nil {
			if cerr := c.check(ctx); cerr != nil {
				out[i].builds = "no: " + firstLine(cerr)
			}
		} else {
			out[i].builds = "cannot open the device: " + firstLine(err)
		}
	}
	if err == nil {
		ctx.Close()
	}
	return out
}

// closeAfter closes what a constructor made, returning its error.
func closeAfter[T interface{ Close() error }](v T, err error) error {
	if err != nil {
		return err
	}
	return v.Close()
}

// firstLine is an error's first line (a build error's log follows it).
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// bytesText writes a size in the binary unit that reads best.
func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
