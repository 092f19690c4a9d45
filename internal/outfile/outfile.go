package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
)

// File is an output being written. It is an io.Writer; Close puts it
// under its final name if every write succeeded, Abort throws it away.
type File struct {
	f     *os.File
	name  string // as the caller gave it, for messages
	final string // the path the file ends up at (links followed)
	tmp   string // the temporary path; "" when written in place
	err   error  // the first write error: the file is not put in place
	done  bool
	size  int64 // bytes written through Write
}

// Create starts the output name. A regular file already there keeps its
// contents (and lends its permissions) until Close; a symbolic link is
// followed, so that the file it points to is replaced and the link stays.
func Create(name string) (*File, error) {
	f, err := start(name)
	if err != nil || f.tmp == "" {
		return f, err
	}
	if f.f, err = os.OpenFile(f.tmp, os.O_WRONLY, 0); err != nil {
		os.Remove(f.tmp)
		return nil, f.renamed(err)
	}
	return f, nil
}

// CreatePath is Create for a library that opens the file itself by its
// path (the ROOT writer): Path names the temporary file to write.
func CreatePath(name string) (*File, error) {
	f, err := start(name)
	if err == nil && f.tmp == "" {
		// A device or pipe: the library opens it in place.
		f.f.Close()
		f.f = nil
	}
	return f, err
}

// start resolves name and claims its temporary file, or opens a file
// that is not regular in place.
func start(name string) (*File, error) {
	// Devices and pipes are opened by their name as given: the kernel
	// follows links such as /dev/stdout -> /proc/self/fd/1 -> pipe:[N]
	// that are no path of a file.
	switch fi, err := os.Stat(name); {
	case err == nil && fi.IsDir():
		return nil, &os.PathError{Op: "create", Path: name, Err: syscall.EISDIR}
	case err == nil && !fi.Mode().IsRegular():
		out, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, err
		}
		return &File{f: out, name: name, final: name}, nil
	}
	final, err := resolve(name)
	if err != nil {
		return nil, err
	}
	f := &File{name: name, final: final}
	perm := fs.FileMode(0o666)
	if fi, err := os.Stat(final); err == nil {
		perm = fi.Mode().Perm()
	}
	dir, base := filepath.Split(final)
	for range 100 {
		f.tmp = filepath.Join(dir, fmt.Sprintf(".%s.%08x.part", base, rand.Uint32()))
		t, err := os.OpenFile(f.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, f.renamed(err)
		}
		// The umask applied to 0666 at creation; an existing file's own
		// permissions win, as they would when it is truncated.
		if perm != 0o666 {
			err = t.Chmod(perm)
		}
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.tmp)
			return nil, f.renamed(err)
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s: no free temporary name in %s", name, dir)
}

// Name is the name the caller gave.
func (f *File) Name() string { return f.name }

// Path is where the data go until Close: the temporary file, or the
// output itself when it is not a regular file.
func (f *File) Path() string {
	if f.tmp != "" {
		return f.tmp
	}
	return f.final
}

// Size is the number of bytes written so far: through Write, or by the
// library writing Path.
func (f *File) Size() int64 {
	if f.f != nil {
		return f.size
	}
	if fi, err := os.Stat(f.Path()); err == nil {
		return fi.Size()
	}
	return 0
}

// Write writes to the temporary file. After an error every later write
// fails too, and Close will not put the file in place.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.f.Write(p)
	f.size += int64(n)
	if err != nil {
		f.err = f.renamed(err)
	}
	return n, f.err
}

// Close closes the file and, if every write succeeded, renames it over
// the final name. Otherwise the temporary file is removed and the first
// error returned. Closing twice does nothing.
func (f *File) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.err
	if f.f != nil {
		if cerr := f.f.Close(); err == nil && cerr != nil {
			err = f.renamed(cerr)
		}
	}
	if f.tmp == "" {
		return err
	}
	if err == nil {
		// A regular file is removed first: ext4 takes a rename over a file
		// (like a truncation) for a replacement that must reach the disk
		// at once, and stalls the rename on writing it all back; the
		// window without a file lasts one system call.
		if fi, lerr := os.Lstat(f.final); lerr == nil && fi.Mode().IsRegular() {
			_ = os.Remove(f.final)
		}
		if err = os.Rename(f.tmp, f.final); err == nil {
			return nil
		}
		err = f.renamed(err)
	}
	os.Remove(f.tmp)
	return err
}

// Abort closes the file and removes it; the final name is untouched
// (an output written in place keeps what was written). After Close it
// does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if f.f != nil {
		f.f.Close()
	}
	if f.tmp != "" {
		os.Remove(f.tmp)
	}
}

// renamed makes an error about the temporary file name the output.
func (f *File) renamed(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return &os.PathError{Op: pe.Op, Path: f.name, Err: pe.Err}
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return &os.PathError{Op: le.Op, Path: f.name, Err: le.Err}
	}
	return fmt.Errorf("%s: %w", f.name, err)
}

// resolve returns the absolute path name stands for: links in its
// directories resolved, and a link in its last element followed, even
// when it points to a file that does not exist yet.
func resolve(name string) (string, error) {
	p, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	for range 40 {
		dir, base := filepath.Split(p)
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			dir = d
		}
		p = filepath.Join(dir, base)
		target, err := os.Readlink(p)
		if err != nil { // not a link, or nothing there yet
			return p, nil
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		p = target
	}
	return "", &os.PathError{Op: "open", Path: name, Err: syscall.ELOOP}
}
