package outfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entries lists the directory, hidden files included.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestCreateReplacesOnlyWhenClosed(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.csv")
	write(t, name, "old")
	os.Chmod(name, 0o600)
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, name); got != "old" {
		t.Fatalf("before Close the output holds %q, want the old contents", got)
	}
	if f.Path() == name || !strings.HasPrefix(filepath.Base(f.Path()), ".out.csv.") {
		t.Fatalf("temporary file %s", f.Path())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, name); got != "new" {
		t.Fatalf("after Close %q", got)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
		t.Fatalf("permissions %v, want the old file's 0600", fi.Mode().Perm())
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Fatalf("left in the directory: %v", es)
	}
	if err := f.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

func TestWriteErrorKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.parquet")
	write(t, name, "old")
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("part"))
	f.f.Close() // the next write fails, as on a full disk
	if _, err := f.Write([]byte("more")); err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("write error %v, want one naming %s", err, name)
	}
	if err := f.Close(); err == nil {
		t.Fatal("Close after a failed write succeeded")
	}
	if got := read(t, name); got != "old" {
		t.Fatalf("output %q after a failed run, want the old contents", got)
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Fatalf("left in the directory: %v", es)
	}
}

func TestAbort(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "new.csv")
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Abort()
	if es := entries(t, dir); len(es) != 0 {
		t.Fatalf("left in the directory: %v", es)
	}
	f.Abort()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); err == nil {
		t.Fatal("Close after Abort created the file")
	}
}

func TestCreateThroughLink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.csv"), filepath.Join(dir, "link.csv")
	write(t, target, "old")
	if err := os.Symlink("target.csv", link); err != nil {
		t.Fatal(err)
	}
	// A dangling link too: the file it names is created.
	dangling := filepath.Join(dir, "dangling.csv")
	os.Symlink("later.csv", dangling)
	for _, name := range []string{link, dangling} {
		f, err := Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("new"))
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(name); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a link", name)
		}
	}
	if got := read(t, target); got != "new" {
		t.Fatalf("target %q", got)
	}
	if got := read(t, filepath.Join(dir, "later.csv")); got != "new" {
		t.Fatalf("dangling link's file %q", got)
	}
}

func TestCreateDeviceInPlace(t *testing.T) {
	// A pipe behind /dev/stdout's chain of links is written in place.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	name := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	if _, err := os.Stat(name); err == nil {
		if err := Check(nil, []Role{{"-o", name}}); err != nil {
			t.Fatal(err)
		}
		p, err := Create(name)
		if err != nil {
			t.Fatal(err)
		}
		p.Write([]byte("through the pipe"))
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if b, _ := io.ReadAll(r); string(b) != "through the pipe" {
			t.Fatalf("pipe got %q", b)
		}
	}
	f, err := Create(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != os.DevNull {
		t.Fatalf("path %s", f.Path())
	}
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatal("/dev/null replaced")
	}
}

func TestCreatePath(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "c.root")
	f, err := CreatePath(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Path(), []byte("root"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, name); got != "root" {
		t.Fatalf("%q", got)
	}
}

func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{dir, filepath.Join(dir, "nodir", "x.csv")} {
		if f, err := Create(name); err == nil {
			f.Abort()
			t.Fatalf("Create(%s) succeeded", name)
		} else if !strings.Contains(err.Error(), name) {
			t.Fatalf("error %q does not name %s", err, name)
		}
	}
	if es := entries(t, dir); len(es) != 0 {
		t.Fatalf("left in the directory: %v", es)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.tpx3")
	write(t, in, "raw")
	os.Symlink("run.tpx3", filepath.Join(dir, "lnk.csv"))
	os.Link(in, filepath.Join(dir, "hard.csv"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	rel, _ := filepath.Rel(mustWd(t), in)
	ins := []Role{{"", in}, {"--mask", filepath.Join(dir, "missing.txt")}}
	for _, c := range []struct {
		outs []Role
		want string // "" for no error
	}{
		{[]Role{{"-o", filepath.Join(dir, "out.csv")}, {"--hits", filepath.Join(dir, "hits.csv")}}, ""},
		{[]Role{{"-o", "-"}, {"--hits", os.DevNull}, {"--tdc", os.DevNull}}, ""},
		{[]Role{{"-o", in}}, "-o " + in + " is the input " + in},
		{[]Role{{"-o", rel}}, "is the input"},
		{[]Role{{"-o", filepath.Join(dir, "lnk.csv")}}, "is the input"},
		{[]Role{{"-o", filepath.Join(dir, "hard.csv")}}, "is the input"},
		{[]Role{{"-o", filepath.Join(dir, "sub", "..", "run.tpx3")}}, "is the input"},
		{[]Role{{"--hits", filepath.Join(dir, "x.csv")}, {"-o", filepath.Join(dir, "x.csv")}}, "--hits " + filepath.Join(dir, "x.csv") + " and -o " + filepath.Join(dir, "x.csv") + " are the same file"},
		{[]Role{{"-o", filepath.Join(dir, "nodir", "r.nrrd")}}, "nodir does not exist"},
		{[]Role{{"-o", filepath.Join(dir, "sub")}}, "is a directory"},
		{[]Role{{"-o", filepath.Join(dir, "run.tpx3", "x")}}, "is not a directory"},
	} {
		err := Check(ins, c.outs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.outs, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: error %v, want %q", c.outs, err, c.want)
		}
	}
	if got := read(t, in); got != "raw" {
		t.Fatal("Check changed the input")
	}
	if es := entries(t, dir); len(es) != 4 {
		t.Fatalf("Check left files: %v", es)
	}
	// A folder given for its files.
	if err := Check([]Role{{"", filepath.Join(dir, "sub")}}, nil); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "sub")+": is a directory: give the files in it ("+filepath.Join(dir, "sub", "*")+")") {
		t.Fatalf("a directory as input: %v", err)
	}
	// A mask given as an input is one too.
	if err := Check([]Role{{"--mask", in}}, []Role{{"-o", in}}); err == nil || !strings.Contains(err.Error(), "same file as --mask") {
		t.Fatalf("flagged input: %v", err)
	}
}

func mustWd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
