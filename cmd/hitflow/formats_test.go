package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/hitflow/hitflow/format"
)

// TestClusterFormats writes the same clustering as CSV, Parquet and ROOT,
// and the hits as CSV and Parquet; all read back to the same clusters.
func TestClusterFormats(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "g.tpx3")
	if code, _, stderr := hitflow(t, "simulate", "pixel", "--dataset", "pion0", "--hits", "30000", "-o", in); code != 0 {
		t.Fatal(stderr)
	}
	var want []int32
	for _, ext := range []string{"csv", "parquet", "root"} {
		out := filepath.Join(dir, "c."+ext)
		hits := filepath.Join(dir, "h."+map[string]string{"root": "parquet"}[ext]+ext)
		args := []string{"cluster", "-q", "-o", out, in}
		if ext != "root" {
			args = append(args, "--hits", hits)
		}
		code, _, stderr := hitflow(t, args...)
		m := summary.FindStringSubmatch(stderr)
		if code != 0 || m == nil {
			t.Fatalf("%s: exit %d: %s", ext, code, stderr)
		}
		c, err := format.ReadClusters(out)
		if err != nil {
			t.Fatal(err)
		}
		if strconv.Itoa(c.Len()) != m[2] {
			t.Fatalf("%s: %d clusters read, summary says %s", ext, c.Len(), m[2])
		}
		if want == nil {
			want = c.Size
		} else if !slices.Equal(c.Size, want) {
			t.Fatalf("%s: sizes differ from CSV", ext)
		}
		if ext == "root" && c.Members.Len() != 30000 {
			t.Fatalf("root: %d hits", c.Members.Len())
		}
		if ext != "root" {
			if fi, err := os.Stat(hits); err != nil || fi.Size() == 0 {
				t.Fatalf("%s: hits file: %v", ext, err)
			}
		}
	}
	if code, _, stderr := hitflow(t, "cluster", "-o", filepath.Join(dir, "c.txt"), in); code != 2 {
		t.Fatalf("unknown extension: exit %d, %s", code, stderr)
	}
}
