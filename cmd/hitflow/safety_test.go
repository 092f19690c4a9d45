package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hitflow/hitflow/format"
)

// TestMain lets the test binary run as hitflow itself, for the tests that
// send it signals.
func TestMain(m *testing.M) {
	if os.Getenv("HITFLOW_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestOutputsNeverOverwriteInputs: an output that is an input (by name,
// through a link, or a hard link), or another output, is refused before
// any work with a usage error naming both, in every command, and every
// file is left as it was.
func TestOutputsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "2000", "-q", "-o", in("s5.tpx3")); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "2000", "-q", "-o", in("s5.csv")); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "simulate", "clue", "--layers", "2", "--points", "100", "-o", in("calo.csv")); code != 0 {
		t.Fatal(stderr)
	}
	os.Symlink("s5.tpx3", in("lnk.csv"))
	os.Symlink("s5.tpx3", in("lnk.png"))
	os.Symlink("calo.csv", in("calo.png"))
	os.Link(in("s5.csv"), in("hard.csv"))
	os.WriteFile(in("mask.txt"), []byte("1 1\n"), 0o644)
	before := snapshot(t, dir)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"cluster", "-q", "-o", in("s5.csv"), in("s5.csv")}, "-o " + in("s5.csv") + " is the input " + in("s5.csv")},
		{[]string{"cluster", "-q", "-o", in("lnk.csv"), in("s5.tpx3")}, "-o " + in("lnk.csv") + " is the input " + in("s5.tpx3")},
		{[]string{"cluster", "-q", "-o", in("hard.csv"), in("s5.csv")}, "is the input"},
		{[]string{"cluster", "-q", "--tdc", in("s5.tpx3"), "-o", in("c.csv"), in("s5.tpx3")}, "--tdc " + in("s5.tpx3") + " is the input"},
		{[]string{"cluster", "-q", "--hits", in("x.csv"), "-o", in("x.csv"), in("s5.tpx3")}, "-o " + in("x.csv") + " and --hits " + in("x.csv") + " are the same file"},
		{[]string{"cluster", "-q", "--tdc", in("x.csv"), "-o", in("x.csv"), in("s5.tpx3")}, "are the same file"},
		{[]string{"cluster", "-q", "--mask", in("mask.txt"), "-o", in("mask.txt"), in("s5.tpx3")}, "is the same file as --mask " + in("mask.txt")},
		{[]string{"cluster", "-q", "--cpuprofile", in("s5.tpx3"), "-o", in("c.csv"), in("s5.tpx3")}, "--cpuprofile " + in("s5.tpx3") + " is the input"},
		{[]string{"mask", "-q", "-o", in("s5.tpx3"), in("s5.tpx3")}, "is the input"},
		{[]string{"mask", "-q", "--plot", in("lnk.png"), "-o", in("m.txt"), in("s5.tpx3")}, "--plot " + in("lnk.png") + " is the input"},
		{[]string{"clue", "--dc", "3", "--rhoc", "1", "-o", in("calo.csv"), in("calo.csv")}, "is the input"},
		{[]string{"clue", "--dc", "3", "--rhoc", "1", "--plot", in("calo.png"), "-o", in("out.csv"), in("calo.csv")}, "--plot " + in("calo.png") + " is the input " + in("calo.csv")},
		{[]string{"cluster", "-q", "--hits", in("nodir/h.csv"), "-o", in("o.csv"), in("s5.tpx3")}, "nodir does not exist"},
		{[]string{"cluster", "-q", "-o", dir, in("s5.tpx3")}, "is a directory"},
	} {
		code, _, stderr := hitflow(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want %d with %q", tc.args, code, stderr, exitUsage, tc.msg)
		}
		if after := snapshot(t, dir); after != before {
			t.Fatalf("%v changed the directory:\n%s\nwas\n%s", tc.args, after, before)
		}
	}
}

// snapshot lists the directory's files with their sizes and contents'
// first bytes, links as links.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, "%s -> %s\n", p, target)
			return nil
		}
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "%s %d %x\n", p, len(data), data[:min(len(data), 64)])
		return nil
	})
	return b.String()
}

// TestInterruptedCommands: every command stops when its context is
// cancelled by a signal, exits 128+signal, and leaves either nothing or
// valid files, never a partial file under an output's name.
func TestInterruptedCommands(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "20000", "-q", "-o", in("s.tpx3")); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "simulate", "clue", "--layers", "2", "--points", "100", "-o", in("calo.csv")); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "pet", "simulate", "--emissions", "2000", "-q", "-o", in("ph")); code != 0 {
		t.Fatal(stderr)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(interrupted{syscall.SIGTERM})
	for _, tc := range []struct {
		args    []string
		written []string // valid outputs of an interrupted run
	}{
		{[]string{"cluster", "-q", "-o", in("c.parquet"), in("s.tpx3")}, []string{"c.parquet"}},
		{[]string{"mask", "-q", "-o", in("m.txt"), in("s.tpx3")}, nil},
		{[]string{"simulate", "pixel", "-q", "--hits", "100000", "-o", in("sim.tpx3")}, nil},
		{[]string{"simulate", "clue", "--layers", "2", "--points", "100", "-o", in("sim.csv")}, nil},
		{[]string{"clue", "--dc", "3", "--rhoc", "1", "-o", in("clue.csv"), in("calo.csv")}, nil},
		{[]string{"pet", "simulate", "--emissions", "100000", "-q", "-o", in("sim")}, nil},
		{[]string{"pet", "reconstruct", "-q", "--iterations", "200", "-o", in("rec"), in("ph.bin")}, nil},
		{[]string{"compare", in("s.tpx3"), in("s.tpx3")}, nil},
		{[]string{"plot", "-o", in("fig"), in("ph_naive.nrrd")}, nil},
		{[]string{"bench", "clue", "--steps", "1", "--repeat", "1"}, nil},
		{[]string{"bench", "pet", "--events", "1000"}, nil},
		{[]string{"bench", "pixel", "--datasets", "gamma", "--hits", "1000", "--runs", "1", "--repeat", "1", "--e2e-hits", "1000"}, nil},
	} {
		before := snapshot(t, dir)
		var out, errb bytes.Buffer
		code := run(ctx, tc.args, strings.NewReader(""), &out, &errb)
		if code != 128+int(syscall.SIGTERM) || !strings.Contains(errb.String(), "interrupted (terminated)") {
			t.Errorf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		for _, name := range tc.written {
			if _, err := format.ReadClusters(in(name)); err != nil {
				t.Errorf("%v: %v", tc.args, err)
			}
			os.Remove(in(name))
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("%v left files:\n%s\nwas\n%s", tc.args, after, before)
		}
	}
}

// TestStoppedWhileReading: a command that reads its inputs whole (compare,
// plot) stops as soon as it is interrupted, not once the reading ends.
// The input is a named pipe that never ends: without the check, the
// command would wait on it forever.
func TestStoppedWhileReading(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "2000", "-q", "-o", in("s.tpx3")); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := hitflow(t, "cluster", "-q", "--hits", in("h.csv"), "-o", in("c.csv"), in("s.tpx3")); code != 0 {
		t.Fatal(stderr)
	}
	header := func(name string) string {
		b, err := os.ReadFile(in(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:bytes.IndexByte(b, '\n')+1])
	}
	for _, tc := range []struct {
		args []string
		head string // what the pipe holds before the command starts
	}{
		{[]string{"compare", in("pipe.csv"), in("h.csv")}, header("h.csv")},
		{[]string{"plot", "-o", in("fig"), in("pipe.csv")}, header("c.csv")},
		{[]string{"plot", "-o", in("fig"), "--hits", in("pipe.csv"), in("c.csv")}, header("h.csv")},
	} {
		pipe := in("pipe.csv")
		os.Remove(pipe)
		if err := syscall.Mkfifo(pipe, 0o600); err != nil {
			t.Skip("no named pipes here:", err)
		}
		// Held open for reading and writing, the pipe neither blocks the
		// command's opening it nor ever ends.
		w, err := os.OpenFile(pipe, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString(tc.head)
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(100*time.Millisecond, func() { cancel(interrupted{syscall.SIGINT}) })
		done := make(chan string, 1)
		go func() {
			var out, errb bytes.Buffer
			code := run(ctx, tc.args, strings.NewReader(""), &out, &errb)
			done <- fmt.Sprintf("exit %d: %s", code, errb.String())
		}()
		select {
		case got := <-done:
			if want := fmt.Sprintf("exit %d: ", 128+int(syscall.SIGINT)); !strings.HasPrefix(got, want) || !strings.Contains(got, "interrupted (interrupt)") {
				t.Errorf("%v: %s", tc.args, got)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("%v: still reading 20 s after the interrupt", tc.args)
		}
		w.Close() // the abandoned reading ends
		if m, _ := filepath.Glob(in("fig*")); len(m) != 0 {
			t.Errorf("%v wrote %v", tc.args, m)
		}
	}
}

// TestSignals runs hitflow as a process on a hit stream that arrives
// through a pipe: SIGTERM (as SIGINT) stops it with the clusters of the
// hits read so far in a complete file and exit 143; SIGKILL leaves the
// previous file of the output's name untouched.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hitflow as a process")
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "s.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "200000", "-q", "-o", raw); code != 0 {
		t.Fatal(stderr)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			fifo, out := filepath.Join(dir, "live.tpx3"), filepath.Join(dir, "c.parquet")
			os.Remove(fifo)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no named pipes here:", err)
			}
			os.WriteFile(out, []byte("previous run"), 0o644)
			cmd := exec.Command(os.Args[0], "cluster", "-q", "--format", "tpx3", "-o", out, fifo)
			cmd.Env = append(os.Environ(), "HITFLOW_TEST_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			half := len(data) / 2 &^ 7
			if _, err := w.Write(data[:half]); err != nil {
				t.Fatal(err)
			}
			// The temporary output exists once the command is writing.
			waitFor(t, func() bool { m, _ := filepath.Glob(filepath.Join(dir, ".c.parquet.*.part")); return len(m) == 1 })
			cmd.Process.Signal(sig)
			time.Sleep(50 * time.Millisecond)
			w.Write(data[half:]) // a live stream goes on; the command reads to its next check
			w.Close()
			err = cmd.Wait()
			status := -1
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				status = ee.ExitCode()
			}
			if sig == syscall.SIGKILL {
				if b, _ := os.ReadFile(out); string(b) != "previous run" {
					t.Fatalf("after SIGKILL the output holds %d bytes, not the previous run", len(b))
				}
				return
			}
			if status != 128+int(sig) || !strings.Contains(stderr.String(), "interrupted") {
				t.Fatalf("exit %d (%v): %s", status, err, stderr.String())
			}
			c, err := format.ReadClusters(out)
			if err != nil || c.Len() == 0 {
				t.Fatalf("output after %v: %v clusters, %v", sig, c, err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".*.part")); len(m) != 0 {
				t.Fatalf("left behind: %v", m)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("timed out")
}

// TestEmptyInputs: a run with no data at all fails with a message and
// writes nothing; an empty file among others is worth a warning.
func TestEmptyInputs(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(in("empty.tpx3"), nil, 0o644)
	os.WriteFile(in("header.csv"), []byte("x,y,weight\n"), 0o644)
	os.WriteFile(in("none.bin"), nil, 0o644)
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--hits", "2000", "-q", "-o", in("s.tpx3")); code != 0 {
		t.Fatal(stderr)
	}
	before := snapshot(t, dir)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"cluster", "-q", "-o", in("c.csv"), in("empty.tpx3")}, "hitflow: warning: " + in("empty.tpx3") + " is empty\n"},
		{[]string{"cluster", "-q", "-o", in("c.csv"), in("empty.tpx3")}, "hitflow: no hits in " + in("empty.tpx3") + ": nothing written"},
		{[]string{"mask", "-q", "-o", in("m.txt"), in("empty.tpx3")}, "no mask written"},
		{[]string{"clue", "--dc", "1", "--rhoc", "1", "-o", in("o.csv"), in("header.csv")}, "header.csv: no points, only a header: nothing written"},
		{[]string{"pet", "reconstruct", "-q", "-o", in("r"), in("none.bin")}, "none.bin: no events to reconstruct"},
	} {
		code, _, stderr := hitflow(t, tc.args...)
		if code != exitRuntime || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want %d with %q", tc.args, code, stderr, exitRuntime, tc.msg)
		}
		if after := snapshot(t, dir); after != before {
			t.Fatalf("%v wrote files:\n%s", tc.args, after)
		}
	}
	code, _, stderr := hitflow(t, "cluster", "-q", "-o", in("c.csv"), in("empty.tpx3"), in("s.tpx3"))
	if code != 0 || !strings.Contains(stderr, "hitflow: warning: "+in("empty.tpx3")+" is empty") || !strings.Contains(stderr, "hits read 2000,") {
		t.Fatalf("an empty file among others: exit %d: %s", code, stderr)
	}
	if code, _, stderr := hitflow(t, "bogus"); code != exitUsage || !strings.Contains(stderr, `unknown command "bogus"`) {
		t.Fatalf("unknown command: exit %d: %s", code, stderr)
	}
}
