package outfile

import (
	"fmt"
	"io"
)

// Writer is an output being written: a [File], or standard output.
type Writer interface {
	io.Writer
	// Close puts the file under its name if every write succeeded;
	// otherwise it removes what was written and returns the error.
	Close() error
	// Abort removes what was written; the name keeps its old file, if
	// any. After Close it does nothing.
	Abort()
}

// CreateWriter creates the output name (see [Create]), or returns stdout
// for a name that means it (see [IsStdout]).
func CreateWriter(name string, stdout io.Writer) (Writer, error) {
	if IsStdout(name) {
		return stdoutWriter{stdout}, nil
	}
	return Create(name)
}

type stdoutWriter struct{ io.Writer }

func (stdoutWriter) Close() error { return nil }
func (stdoutWriter) Abort()       {}

// Write creates name (see [Create]) and writes it with draw; the error
// names the file. A failed draw leaves nothing behind.
func Write(name string, draw func(io.Writer) error) error {
	f, err := Create(name)
	if err != nil {
		return err
	}
	if err := draw(f); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", name, err)
	}
	return f.Close()
}

// Abort discards the output behind w if it has one (an Abort method); a
// run that failed before its outputs meant anything calls it on each.
func Abort(w any) {
	if a, ok := w.(interface{ Abort() }); ok {
		a.Abort()
	}
}
