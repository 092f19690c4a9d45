package format

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
)

// TestDevNull: -o /dev/null has no extension, and writes nothing: the
// clusters are not formatted, the hits not asked for.
func TestDevNull(t *testing.T) {
	cw, err := CreateClusters(os.DevNull, nil)
	if err != nil {
		t.Fatal(err)
	}
	hw, err := CreateHits(os.DevNull, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A cluster without its hits: a hit writer that formatted would refuse it.
	c, _ := pixel.NewClusterer(pixel.DefaultConfig())
	var h pixel.Hits
	h.Append(1, 1, 0, 1)
	c.Add(&h)
	bare := c.Flush()
	if _, ok := cw.(discard); !ok || cw.NeedsMembers() || cw.Write(bare) != nil || hw.WriteMembers(bare) != nil || cw.Close() != nil || hw.Close() != nil {
		t.Fatalf("writers %T, %T", cw, hw)
	}
}

func TestUnknownExtension(t *testing.T) {
	if _, err := CreateClusters("out.xyz", nil); !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "out.xyz") {
		t.Fatalf("error %v", err)
	}
	if _, err := CreateHits("out.root", nil); !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("error %v", err)
	}
}

// TestWritersReplaceWhenClosed checks that every clusters and hits
// writer leaves an existing file of its name untouched until Close, and
// that Abort keeps it (a run that failed or was interrupted), whatever the
// format.
func TestWritersReplaceWhenClosed(t *testing.T) {
	dir := t.TempDir()
	c := fixture.Clusters(t, true)[0]
	for _, ext := range []string{".csv", ".clog", ".parquet", ".arrow", ".root"} {
		for _, abort := range []bool{false, true} {
			name := filepath.Join(dir, "clusters"+ext)
			if err := os.WriteFile(name, []byte("old run"), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := CreateClusters(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(c); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(name); string(b) != "old run" {
				t.Fatalf("%s changed before Close", ext)
			}
			if abort {
				outfile.Abort(w)
			} else if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(name)
			if abort != (string(b) == "old run") {
				t.Fatalf("%s, abort %v: the old file is there: %v", ext, abort, string(b) == "old run")
			}
			if es, _ := os.ReadDir(dir); len(es) != 1 {
				t.Fatalf("%s: %d files in the directory", ext, len(es))
			}
			if !abort && ext != ".clog" && ext != ".arrow" {
				got, err := ReadClusters(name)
				if err != nil || got.Len() != c.Len() {
					t.Fatalf("%s: read back %v, %v", ext, got, err)
				}
			}
			os.Remove(name)
		}
	}
}

// TestNoMembers: without members the writers of hits refuse rather than
// writing empty frames or no hits.
func TestNoMembers(t *testing.T) {
	c, _ := pixel.NewClusterer(pixel.DefaultConfig())
	var h pixel.Hits
	h.Append(1, 1, 0, 1)
	c.Add(&h)
	bare := c.Flush()
	for _, ext := range []string{".clog", ".root"} {
		w, err := CreateClusters(filepath.Join(t.TempDir(), "c"+ext), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(bare); !errors.Is(err, pixel.ErrNoMembers) {
			t.Fatalf("%s: error %v", ext, err)
		}
		outfile.Abort(w)
	}
	for _, ext := range []string{".csv", ".parquet", ".arrow"} {
		hw, err := CreateHits(filepath.Join(t.TempDir(), "hits"+ext), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := hw.WriteMembers(bare); !errors.Is(err, pixel.ErrNoMembers) {
			t.Fatalf("%s: error %v", ext, err)
		}
		hw.Close()
	}
}
