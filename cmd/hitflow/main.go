// Command hitflow turns raw radiation-detector data into physics objects:
// pixel-hit clusters from Timepix3 data, CLUE clusters of calorimeter hits
// and J-PET images.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/internal/bench"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	// exitTrouble is compare's code for an error, as diff's: 1 says
	// that the clusterings differ.
	exitTrouble = 2
	// exitInterrupted is a shell's code for a process ended by SIGINT.
	exitInterrupted = 130
)

func main() {
	os.Exit(run(interruptible(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// interruptible returns a context that SIGINT (Ctrl-C) and SIGTERM cancel
// with an [interrupted] cause: the command stops at its next check and
// finishes its outputs. A second signal ends the process at once; its
// outputs' final names are untouched then (see internal/outfile). A live
// run (see [untilSecondSignal]) takes the first signal to stop its input
// and the second to stop at once; a third ends it.
func interruptible() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	live := &liveSignals{again: make(chan struct{})}
	ctx = context.WithValue(ctx, liveSignalsKey{}, live)
	// Room for both signals that matter: Notify drops a signal that finds
	// the channel full, and a quick double Ctrl-C could come before the
	// first is taken.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		cancel(interrupted{s})
		if live.live.Load() {
			<-sigs
			close(live.again)
		}
		signal.Stop(sigs)
	}()
	return ctx
}

// usageError marks errors in how the command was called.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// withExitCode gives an error the exit code of its command's convention
// (compare's 2 for trouble, as diff's).
type withExitCode struct {
	err  error
	code int
}

func (w withExitCode) Error() string { return w.err.Error() }
func (w withExitCode) Unwrap() error { return w.err }

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetIn(stdin)
	var prof profiles
	prof.addFlags(root)
	root.SetArgs(args)
	err := errors.Join(root.ExecuteContext(ctx), prof.stop())
	if err == nil {
		return exitOK
	}
	if _, ok := errors.AsType[interrupted](err); !ok && errors.Is(err, context.Canceled) && context.Cause(ctx) != nil {
		err = context.Cause(ctx) // a library's ctx.Err(): say which signal
	}
	fmt.Fprintln(stderr, "hitflow:", err)
	if _, ok := errors.AsType[usageError](err); ok {
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		if i, ok := context.Cause(ctx).(interrupted); ok {
			return i.exitCode()
		}
		return exitInterrupted
	}
	if w, ok := errors.AsType[withExitCode](err); ok {
		return w.code
	}
	return exitRuntime
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "hitflow",
		Short: "Fast event building for radiation detectors",
		Long: `hitflow turns raw detector data into physics objects fast enough for
real time: Timepix3 pixel hits into clusters (exactly, with the three
cluster definitions of Čelko et al.), calorimeter hits into CLUE
clusters, and J-PET list-mode events into MLEM images; with simulation of
the papers' datasets for tests and benchmarks. Every command takes
--cpuprofile and --memprofile for go tool pprof, and --trace for go tool
trace.`,
		Example: `  hitflow simulate pixel --dataset gamma --hits 1000000 -o gamma.tpx3
  hitflow cluster -o clusters.csv gamma.tpx3
  hitflow cluster -o clusters.csv      # clusters a built-in simulated sample`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// Without it cobra's own check reports an unknown command as a plain
	// error (exit 1); a mistyped command is a usage error.
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q; run 'hitflow --help' for the list", args[0])
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.AddCommand(newClusterCmd(stdout, stderr), newClueCmd(stdout, stderr), newPetCmd(stderr), newSimulateCmd(stderr), newBenchCmd(stdout, stderr), newCompareCmd(stdout, stderr), newMaskCmd(stdout, stderr), newPlotCmd(stdout), newDevicesCmd(stdout), newTimeWalkCmd(stdout, stderr), newImageCmd(stderr), newVersionCmd(stdout))
	return root
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: "  hitflow version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := prepare(cmd.Context(), nil); err != nil {
				return err
			}
			_, err := fmt.Fprintln(stdout, bench.Version())
			return err
		},
	}
}

// warnf writes a warning line to stderr, in the style of the errors.
func warnf(stderr io.Writer, format string, args ...any) {
	fmt.Fprintf(stderr, "hitflow: warning: "+format+"\n", args...)
}

// plural counts n things: "1 file", "2 files".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// noArgs rejects positional arguments as a usage error.
// needArgs refuses a command without arguments, saying why.
func needArgs(why string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s", why)
		}
		return nil
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}
