package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/internal/outfile"
)

// profiles are the --cpuprofile, --memprofile and --trace files of any
// command, for `go tool pprof` and `go tool trace`: the way to see where a
// real run (a user's file, their output format) spends its time, which the
// benchmarks only approximate. The trace shows what a profile cannot: a
// stage waiting for another, or in a system call (it found a run to Arrow
// spending a quarter of its time closing the file it overwrote).
type profiles struct {
	cpu, mem, trace    string
	cpuFile, traceFile *outfile.File
	started            bool
}

// addFlags adds the flags to every command of root; the command starts
// the CPU profile and the trace in [prepare], once its files are checked.
func (p *profiles) addFlags(root *cobra.Command) {
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		cmd.SetContext(context.WithValue(cmd.Context(), profilesKey{}, p))
		return nil
	}
	f := root.PersistentFlags()
	f.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file")
	f.StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations included) at the end of the command to this file")
	f.StringVar(&p.trace, "trace", "", "write an execution trace of the command to this file (go tool trace)")
}

// roles are the profile files, outputs of every command.
func (p *profiles) roles() []outfile.Role {
	return []outfile.Role{role("--cpuprofile", p.cpu), role("--memprofile", p.mem), role("--trace", p.trace)}
}

// start begins the CPU profile and the trace, once; stop ends what
// started, whatever start returned.
func (p *profiles) start() error {
	if p.started {
		return nil
	}
	p.started = true
	var err error
	if p.cpuFile, err = startProfile("cpuprofile", p.cpu, pprof.StartCPUProfile); err != nil {
		return err
	}
	p.traceFile, err = startProfile("trace", p.trace, trace.Start)
	return err
}

// startProfile creates the file name of the flag and starts writing to
// it; an empty name starts nothing.
func startProfile(flag, name string, start func(io.Writer) error) (*outfile.File, error) {
	if name == "" {
		return nil, nil
	}
	f, err := outfile.Create(name)
	if err != nil {
		return nil, usagef("--%s: %v", flag, err)
	}
	if err := start(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("--%s %s: %w", flag, name, err)
	}
	return f, nil
}

// stop ends the profiles, also after a failed command: a profile of what
// went wrong is as useful as one of a success.
func (p *profiles) stop() error {
	var errs []error
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile %s: %w", p.cpu, err))
		}
		p.cpuFile = nil
	}
	if p.traceFile != nil {
		trace.Stop()
		if err := p.traceFile.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--trace %s: %w", p.trace, err))
		}
		p.traceFile = nil
	}
	if p.mem != "" && p.started {
		if err := writeHeapProfile(p.mem); err != nil {
			errs = append(errs, fmt.Errorf("--memprofile %s: %w", p.mem, err))
		}
	}
	return errors.Join(errs...)
}

func writeHeapProfile(name string) error {
	f, err := outfile.Create(name)
	if err != nil {
		return err
	}
	runtime.GC() // the heap in use as of the end, not the last collection
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Abort()
		return err
	}
	return f.Close()
}
