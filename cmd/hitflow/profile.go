package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/cobra"
)

// profiles are the --cpuprofile, --memprofile and --trace files of any
// command, for `go tool pprof` and `go tool trace`: the way to see where a
// real run (a user's file, their output format) spends its time, which the
// benchmarks only approximate. The trace shows what a profile cannot: a
// stage waiting for another, or in a system call (it found a run to Arrow
// spending a quarter of its time closing the file it overwrote).
type profiles struct {
	cpu, mem, trace    string
	cpuFile, traceFile *os.File
}

// addFlags adds the flags to every command of root, and starts the CPU
// profile and the trace once they are parsed.
func (p *profiles) addFlags(root *cobra.Command) {
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
	f := root.PersistentFlags()
	f.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file")
	f.StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations included) at the end of the command to this file")
	f.StringVar(&p.trace, "trace", "", "write an execution trace of the command to this file (go tool trace)")
}

// start begins the CPU profile and the trace, once the flags are parsed;
// stop ends what started, whatever start returned.
func (p *profiles) start() error {
	var err error
	if p.cpuFile, err = startProfile("cpuprofile", p.cpu, pprof.StartCPUProfile); err != nil {
		return err
	}
	p.traceFile, err = startProfile("trace", p.trace, trace.Start)
	return err
}

// startProfile creates the file name of the flag and starts writing to
// it; an empty name starts nothing.
func startProfile(flag, name string, start func(io.Writer) error) (*os.File, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, usagef("--%s: %v", flag, err)
	}
	if err := start(f); err != nil {
		f.Close()
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
	if p.mem != "" {
		if err := writeHeapProfile(p.mem); err != nil {
			errs = append(errs, fmt.Errorf("--memprofile %s: %w", p.mem, err))
		}
	}
	return errors.Join(errs...)
}

func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	runtime.GC() // the heap in use as of the end, not the last collection
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
