package root

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"go-hep.org/x/hep/groot"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/internal/damage"
	"github.com/hitflow/hitflow/pixel"
)

// ROOT files are read in a child process. groot v0.40.0 decodes baskets on
// goroutines of its own, where a panic on a damaged file cannot be
// recovered, trusts the counts in a file when it allocates, and keeps the
// streamers of every file it opens in a process-wide registry. Fuzzing
// found all three: a flipped byte crashed the whole program or made it ask
// for tens of GB. The child is this same executable, started with
// rootChildEnv naming what to read; it answers on its standard output
// (see writeRaw), so a crash there becomes an error naming the file and a
// damaged file leaves nothing behind in the caller.
const rootChildEnv = "HITFLOW_READ_ROOT"

// The child runs before main (or the tests) and never returns.
func init() {
	if req, ok := os.LookupEnv(rootChildEnv); ok {
		os.Exit(serveROOT(req))
	}
}

// rootReply is what the child sends back: one of the results, or Err.
type rootReply struct {
	Err      string
	Kind     string
	Clusters *pixel.Clusters
	Table    *cluecsv.Table
	Result   *clue.Result
}

// readROOT reads what ("clusters", "clue" or "kind") from a ROOT file in a
// child process, or here when the executable cannot be started again.
func readROOT(what, name string) (*rootReply, error) {
	// A missing or unreadable file keeps its usual error (fs.ErrNotExist).
	if _, err := os.Stat(name); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	here := func() (*rootReply, error) {
		rep := readROOTHere(what, name)
		return rep, rep.err()
	}
	exe, err := os.Executable()
	if err != nil {
		return here()
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), rootChildEnv+"="+what+":"+name)
	stderr := &headBuffer{max: 16 << 10}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		// The executable may have been replaced or removed since it started.
		return here()
	}
	var rep rootReply
	decodeErr := readRaw(bufio.NewReaderSize(out, 1<<16), &rep)
	io.Copy(io.Discard, out) // a child blocked writing would never exit
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s: damaged file: the ROOT reader crashed (%v)%s", name, err, crashLine(stderr.Bytes()))
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("%s: reading the ROOT reader's answer: %w", name, decodeErr)
	}
	return &rep, rep.err()
}

func (r *rootReply) err() error {
	if r.Err != "" {
		return errors.New(r.Err)
	}
	return nil
}

// serveROOT is the child: it reads the request "what:name", answers on
// standard output and returns the exit code.
func serveROOT(req string) int {
	what, name, _ := strings.Cut(req, ":")
	// A damaged file can make groot allocate without bound; should the
	// machine run out of memory, Linux is to end this child, whose death
	// the caller reports, rather than the caller. (Elsewhere the file
	// does not exist and nothing changes.)
	os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	rep := readROOTHere(what, name)
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	if err := writeRaw(w, rep); err != nil {
		fmt.Fprintf(os.Stderr, "hitflow ROOT reader: %v\n", err)
		return 1
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	return 0
}

// readROOTHere reads in this process; a panic of groot on the calling
// goroutine becomes the reply's error.
func readROOTHere(what, name string) *rootReply {
	rep := &rootReply{}
	err := func() (err error) {
		defer damage.Recover(name, &err)
		switch what {
		case "clusters":
			rep.Clusters, err = readClusterROOT(name)
		case "clue":
			rep.Table, rep.Result, err = readCLUEROOT(name)
		case "kind":
			rep.Kind, err = rootKind(name)
		default:
			err = fmt.Errorf("%s: unknown ROOT request %q", name, what)
		}
		return err
	}()
	if err != nil {
		rep.Err = err.Error()
	}
	return rep
}

// rootKind names the tree a ROOT file holds: "clusters" or "clue".
func rootKind(name string) (string, error) {
	f, err := groot.Open(name)
	if err != nil {
		return "", fmt.Errorf("%w", err)
	}
	defer f.Close()
	for _, k := range f.Keys() {
		if k.Name() == "clusters" || k.Name() == "clue" {
			return k.Name(), nil
		}
	}
	return "", fmt.Errorf("%s: no clusters or clue tree", name)
}

// headBuffer keeps the first max bytes written to it: the child's panic
// message comes first, the goroutine dump after it can be long.
type headBuffer struct {
	bytes.Buffer
	max int
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// crashLine picks the Go runtime's one-line reason out of a crash dump.
func crashLine(dump []byte) string {
	for line := range strings.SplitSeq(string(dump), "\n") {
		for _, p := range []string{"panic: ", "fatal error: ", "runtime: "} {
			if strings.HasPrefix(line, p) {
				return ": " + line
			}
		}
	}
	return ""
}

// ReadClusters reads the clusters tree of a file written by
// [CreateClusters], the hits of each cluster as Members.
func ReadClusters(name string) (*pixel.Clusters, error) {
	rep, err := readROOT("clusters", name)
	if err != nil {
		return nil, err
	}
	return rep.Clusters, nil
}

// ReadCLUE reads the clue tree of a file written by [WriteCLUE].
func ReadCLUE(name string) (*cluecsv.Table, *clue.Result, error) {
	rep, err := readROOT("clue", name)
	if err != nil {
		return nil, nil, err
	}
	return rep.Table, rep.Result, nil
}

// Kind names the tree a ROOT file holds: "clusters" or "clue".
func Kind(name string) (string, error) {
	rep, err := readROOT("kind", name)
	if err != nil {
		return "", err
	}
	return rep.Kind, nil
}
