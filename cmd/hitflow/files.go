package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hitflow/hitflow/internal/outfile"
)

// interrupted is the cause of a run's cancellation by a signal. It is a
// context.Canceled, so that the libraries' ctx.Err() and the commands'
// own checks end the same way.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string        { return "interrupted (" + i.sig.String() + ")" }
func (i interrupted) Is(target error) bool { return target == context.Canceled }

// exitCode is the shell's code for a process ended by the signal.
func (i interrupted) exitCode() int {
	if s, ok := i.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// stopped returns the error of a command that stopped early because ctx
// was cancelled: its cause (the signal), with what the command kept.
func stopped(ctx context.Context, kept string) error {
	err := context.Cause(ctx)
	if err == nil {
		err = context.Canceled
	}
	if kept == "" {
		return err
	}
	return errors.Join(err, errors.New(kept))
}

// untilStopped returns what work returns, or, as soon as ctx ends first,
// stopped(ctx, kept): reading a large file whole, or comparing two, goes
// on for seconds without a point to check ctx. The work must write
// nothing, as it is left to finish unwatched while the command exits.
func untilStopped[T any](ctx context.Context, kept string, work func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := work()
		done <- result{v, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
	}
	if ctx.Err() != nil { // also when the work ended as the signal came
		var zero T
		return zero, stopped(ctx, kept)
	}
	return r.v, r.err
}

// profilesKey finds the command's profiles in its context.
type profilesKey struct{}

// role names an output or input by its flag, for messages.
func role(flag, name string) outfile.Role { return outfile.Role{Flag: flag, Name: name} }

// prefixOf is the prefix that an -o PREFIX means, and the extension it
// ended in: a user who names the file a command writes (rec.nrrd, or
// fig.png for a figure) means its prefix, not rec.nrrd.nrrd. The
// extensions, one of which it may end in, are compared without regard to
// case; ext is "" when it ends in none.
func prefixOf(out string, exts ...string) (prefix, ext string) {
	e := filepath.Ext(out)
	prefix = strings.TrimSuffix(out, e)
	if prefix == "" || strings.HasSuffix(prefix, string(filepath.Separator)) {
		return out, "" // a name that is all extension
	}
	for _, x := range exts {
		if strings.EqualFold(e, x) {
			return prefix, x
		}
	}
	return out, ""
}

// positional names the files given as arguments.
func positional(files ...string) []outfile.Role {
	var rs []outfile.Role
	for _, f := range files {
		rs = append(rs, outfile.Role{Name: f})
	}
	return rs
}

// prepare checks, before any work, every file the command writes against
// the files it reads and against each other (see [outfile.Check]), the
// profile files of --cpuprofile, --memprofile and --trace included; then
// it starts the CPU profile and the trace. Every command that reads or
// writes files calls it first.
func prepare(ctx context.Context, inputs []outfile.Role, outputs ...outfile.Role) error {
	p, _ := ctx.Value(profilesKey{}).(*profiles)
	if p != nil {
		outputs = append(outputs, p.roles()...)
	}
	if err := outfile.Check(inputs, outputs); err != nil {
		return usageError{err}
	}
	if p == nil {
		return nil
	}
	return p.start()
}
