package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Role is a file a command reads or writes, with the flag that names it
// ("-o", "--hits"; "" for a positional argument), for messages.
type Role struct{ Flag, Name string }

func (r Role) String() string {
	if r.Flag == "" {
		return r.Name
	}
	return r.Flag + " " + r.Name
}

// Stdout is the output name that means standard output; it and
// os.DevNull are never checked. "-" followed by an extension ("-.arrow")
// is standard output in that format.
const Stdout = "-"

// IsStdout reports whether name means standard output: "-", or "-" with an
// extension.
func IsStdout(name string) bool {
	return name == Stdout || strings.HasPrefix(name, Stdout+".") && !strings.ContainsRune(name, '/')
}

// Check refuses outputs that would destroy an input or each other, or
// that cannot be created: an output that is the same file as an input or
// as another output, an existing directory, or one whose directory is
// missing or not writable; and an input that is a directory (a run's
// folder given for its files). Inputs that do not exist are left to the
// command that opens them. The error names both files of a conflict.
func Check(inputs, outputs []Role) error {
	type known struct {
		Role
		path string
		fi   fs.FileInfo // nil when there is no file yet
	}
	identify := func(r Role) (known, error) {
		p, err := resolve(r.Name)
		if err != nil {
			return known{}, err
		}
		k := known{Role: r, path: p}
		if fi, err := os.Stat(p); err == nil {
			k.fi = fi
		}
		return k, nil
	}
	same := func(a, b known) bool {
		if a.fi != nil && b.fi != nil {
			return os.SameFile(a.fi, b.fi)
		}
		return a.path == b.path
	}
	var ins []known
	for _, r := range inputs {
		if r.Name == "" || IsStdout(r.Name) {
			continue
		}
		k, err := identify(r)
		if err != nil {
			return err
		}
		if k.fi != nil && k.fi.IsDir() {
			return fmt.Errorf("%s: is a directory: give the files in it (%s)", r, filepath.Join(r.Name, "*"))
		}
		if k.fi != nil {
			ins = append(ins, k)
		}
	}
	var outs []known
	for _, r := range outputs {
		if r.Name == "" || IsStdout(r.Name) || r.Name == os.DevNull {
			continue
		}
		if fi, err := os.Stat(r.Name); err == nil && !fi.Mode().IsRegular() {
			if fi.IsDir() {
				return fmt.Errorf("%s: is a directory", r)
			}
			continue // a device or pipe (/dev/stdout): written in place
		}
		k, err := identify(r)
		if err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
		for _, in := range ins {
			if same(k, in) {
				if in.Flag == "" {
					return fmt.Errorf("%s is the input %s: refusing to overwrite an input", r, in.Name)
				}
				return fmt.Errorf("%s is the same file as %s, an input: refusing to overwrite an input", r, in)
			}
		}
		for _, o := range outs {
			if same(k, o) {
				return fmt.Errorf("%s and %s are the same file: give each output its own name", o, r)
			}
		}
		if err := writableDir(filepath.Dir(k.path)); err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
		outs = append(outs, k)
	}
	return nil
}

// writableDir checks that files can be created in dir, by creating one.
func writableDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".hitflow-check-*")
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %w", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}
