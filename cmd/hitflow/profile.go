package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiles are the --cpuprofile and --memprofile files of any command, for
// `go tool pprof`: the way to see where a real run (a user's file, their
// output format) spends its time, which the benchmarks only approximate.
type profiles struct {
	cpu, mem string
	cpuFile  *os.File
}

// addFlags adds the flags to every command of root, and starts the CPU
// profile once they are parsed.
func (p *profiles) addFlags(root *cobra.Command) {
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
	f := root.PersistentFlags()
	f.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file")
	f.StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations included) at the end of the command to this file")
}

// start begins the CPU profile, once the flags are parsed.
func (p *profiles) start() error {
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return usagef("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile %s: %w", p.cpu, err)
	}
	p.cpuFile = f
	return nil
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
