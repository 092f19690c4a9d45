package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func hitflow(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

var summary = regexp.MustCompile(`hits read (\d+), clusters (\d+), late hits (\d+), invalid hits (\d+), out of range (\d+), [0-9.]+ Mhit/s`)

func TestSimulateAndCluster(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"tpx3", "t3pa", "csv"} {
		in := filepath.Join(dir, "pion."+ext)
		code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "pion45", "--hits", "20000", "--seed", "3", "--disorder", "20us", "-o", in)
		if code != 0 {
			t.Fatalf("simulate %s: exit %d: %s", ext, code, stderr)
		}
		clusters, hits := filepath.Join(dir, ext+".csv"), filepath.Join(dir, ext+"-hits.csv")
		code, _, stderr = hitflow(t, "cluster", "--hits", hits, "-o", clusters, in)
		if code != 0 {
			t.Fatalf("cluster %s: exit %d: %s", ext, code, stderr)
		}
		m := summary.FindStringSubmatch(stderr)
		if m == nil || m[1] != "20000" || m[3] != "0" || m[4] != "0" || m[5] != "0" {
			t.Fatalf("summary %q", stderr)
		}
		// Every hit is labelled with the id of a cluster whose size agrees.
		sizes := map[string]int{}
		for i, line := range lines(t, clusters) {
			if i == 0 {
				continue
			}
			f := strings.Split(line, ",")
			sizes[f[0]], _ = strconv.Atoi(f[1])
		}
		if strconv.Itoa(len(sizes)) != m[2] {
			t.Fatalf("%d clusters written, summary says %s", len(sizes), m[2])
		}
		hl := lines(t, hits)
		if hl[0] != "x,y,toa_ns,tot,cluster" || len(hl) != 20001 {
			t.Fatalf("hits file: header %q, %d lines", hl[0], len(hl))
		}
		for _, line := range hl[1:] {
			sizes[line[strings.LastIndexByte(line, ',')+1:]]--
		}
		for id, n := range sizes {
			if n != 0 {
				t.Fatalf("%s: cluster %s size off by %d", ext, id, n)
			}
		}
	}
	// The three formats hold the same hits, so the clusters agree.
	a, b, c := lines(t, filepath.Join(dir, "tpx3.csv")), lines(t, filepath.Join(dir, "t3pa.csv")), lines(t, filepath.Join(dir, "csv.csv"))
	if strings.Join(a, "\n") != strings.Join(b, "\n") || strings.Join(a, "\n") != strings.Join(c, "\n") {
		t.Fatal("formats clustered differently")
	}
}

func lines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestBuiltinSample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.clog")
	code, _, stderr := hitflow(t, "cluster", "-q", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if m := summary.FindStringSubmatch(stderr); m == nil || m[1] != "1000000" {
		t.Fatalf("summary %q", stderr)
	}
	if l := lines(t, out); !strings.HasPrefix(l[0], "Frame 1 (") {
		t.Fatalf("clog starts %q", l[0])
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"version"}, 0, ""},
		{[]string{"cluster", "--bogus"}, 2, "unknown flag"},
		{[]string{"cluster", "--definition", "fuzzy"}, 2, `unknown cluster definition "fuzzy"`},
		{[]string{"cluster", "--dt", "5"}, 2, "not a duration"},
		{[]string{"cluster", "--format", "xml"}, 2, "unknown format"},
		{[]string{"cluster", "--layout", "hex"}, 2, "unknown chip layout"},
		{[]string{"cluster", "-o", filepath.Join(dir, "x.txt")}, 2, "unknown format"},
		{[]string{"cluster", "-o", filepath.Join(dir, "x.csv"), filepath.Join(dir, "missing.tpx3")}, 1, "missing.tpx3"},
		{[]string{"simulate", "pixel"}, 2, "needs -o"},
		{[]string{"simulate", "pixel", "--dataset", "muon", "-o", "x.csv"}, 2, "unknown dataset"},
		{[]string{"simulate", "pixel", "-o", filepath.Join(dir, "x.clog")}, 2, "extension"},
		{[]string{"version", "extra"}, 2, "takes no arguments"},
	} {
		code, stdout, stderr := hitflow(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", tc.args, code, stderr, tc.code, tc.msg)
		}
		if tc.args[0] == "version" && tc.code == 0 && !strings.HasPrefix(stdout, "hitflow ") {
			t.Errorf("version printed %q", stdout)
		}
	}
}

func TestBadInputKeepsClusters(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.t3pa")
	os.WriteFile(in, []byte("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n0\t5\t10\t3\t0\t0\n1\t6\toops\t3\t0\t0\n"), 0o644)
	out := filepath.Join(dir, "c.csv")
	code, _, stderr := hitflow(t, "cluster", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, "bad.t3pa: line 3") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if l := lines(t, out); len(l) != 2 || !strings.HasPrefix(l[1], "0,1,250,") {
		t.Fatalf("clusters file %q", l)
	}
}

// TestHelpHasExamples walks the whole command tree: every command that
// runs has examples in its --help.
func TestHelpHasExamples(t *testing.T) {
	var walk func(c *cobra.Command, path []string)
	n := 0
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
		if !c.Runnable() {
			return
		}
		n++
		code, stdout, _ := hitflow(t, append(path, "--help")...)
		if code != 0 || !strings.Contains(stdout, "Examples:") {
			t.Errorf("%v --help: exit %d, no examples:\n%s", path, code, stdout)
		}
	}
	walk(newRootCmd(io.Discard, io.Discard), nil)
	if n < 12 {
		t.Fatalf("only %d commands found", n)
	}
}

// TestProfiles: both profiles are written, and are pprof's gzipped
// protocol buffers, after a command that succeeded and after one that
// failed.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"simulate", "pixel", "--hits", "200000", "-q", "-o", filepath.Join(dir, "g.tpx3")}, exitOK},
		{[]string{"cluster", "-q", "-o", filepath.Join(dir, "c.csv"), filepath.Join(dir, "missing.tpx3")}, exitRuntime},
	} {
		cpu, mem := filepath.Join(dir, tc.args[0]+".cpu"), filepath.Join(dir, tc.args[0]+".mem")
		code, _, stderr := hitflow(t, append(tc.args, "--cpuprofile", cpu, "--memprofile", mem)...)
		if code != tc.code {
			t.Fatalf("%v: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
		}
		for _, name := range []string{cpu, mem} {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
				t.Fatalf("%s: %d bytes, not a gzipped profile", name, len(b))
			}
		}
	}
	code, _, stderr := hitflow(t, "version", "--cpuprofile", filepath.Join(dir, "no", "such", "dir"))
	if code != exitUsage || !strings.Contains(stderr, "--cpuprofile") {
		t.Fatalf("unwritable profile: exit %d: %s", code, stderr)
	}
}
