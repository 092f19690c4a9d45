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
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks errors in how the command was called.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	var prof profiles
	prof.addFlags(root)
	root.SetArgs(args)
	err := errors.Join(root.ExecuteContext(ctx), prof.stop())
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "hitflow:", err)
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
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
	root.AddCommand(newClusterCmd(stdout, stderr), newClueCmd(stdout, stderr), newPetCmd(stdout, stderr), newSimulateCmd(stderr), newBenchCmd(stdout, stderr), newCompareCmd(stdout, stderr), newMaskCmd(stdout, stderr), newPlotCmd(stdout), newVersionCmd(stdout))
	return root
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: "  hitflow version",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(stdout, versionLine())
			return err
		},
	}
}

// versionLine is the version and the Go release, which names the Go
// experiments of the build ("-X:simd" for the vector code of CLUE and
// J-PET): benchmark numbers depend on it.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "hitflow (devel)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	return fmt.Sprintf("hitflow %s %s", v, bi.GoVersion)
}

// benchHeader starts a benchmark's output with what its numbers depend
// on: the build (vector code or not) and the machine.
func benchHeader(w io.Writer) {
	fmt.Fprintf(w, "%s, %s/%s, %d CPUs, GOMAXPROCS %d\n\n", versionLine(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0))
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}
