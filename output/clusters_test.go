package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/pixel"
)

func TestClusterCSV(t *testing.T) {
	for _, tc := range []struct {
		calibrated bool
		want       string
	}{
		{false, ClusterCSVHeader + "\n" +
			"0,3,100,60,60,,10.5,20.3333,10,11,20,21,30\n" +
			"1,1,300,0,7,,200,5,200,200,5,5,7\n"},
		{true, ClusterCSVHeader + "\n" +
			"0,3,100,60,60,5,10.4,20.2,10,11,20,21,3\n" +
			"1,1,300,0,7,0.5,200,5,200,200,5,5,0.5\n"},
	} {
		var buf bytes.Buffer
		w, err := NewClusterCSV(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(fixture.Two(t, tc.calibrated)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("calibrated %v:\n%s\nwant\n%s", tc.calibrated, buf.String(), tc.want)
		}
	}
}

func TestCLog(t *testing.T) {
	var buf bytes.Buffer
	w := NewCLog(&buf)
	if !w.NeedsMembers() {
		t.Fatal("clog must ask for members")
	}
	if err := w.Write(fixture.Two(t, false)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	want := "Frame 1 (0.000000, 0.000000 s)\n[10, 20, 30, 100] [11, 20, 10, 151.5625] [11, 21, 20, 160] \n\n" +
		"Frame 2 (0.000000, 0.000000 s)\n[200, 5, 7, 300] \n\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
	// Without members the writers refuse rather than writing empty frames
	// or no hits.
	c, _ := pixel.NewClusterer(pixel.DefaultConfig())
	var h pixel.Hits
	h.Append(1, 1, 0, 1)
	c.Add(&h)
	bare := c.Flush()
	if err := w.Write(bare); !errors.Is(err, pixel.ErrNoMembers) {
		t.Fatalf("clog: error %v", err)
	}
	rw, err := CreateClusterROOT(filepath.Join(t.TempDir(), "c.root"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Write(bare); !errors.Is(err, pixel.ErrNoMembers) {
		t.Fatalf("root: error %v", err)
	}
	rw.Close()
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

// TestTextPartsInOrder: a batch formatted by several goroutines gives
// the bytes of its clusters written a few at a time, for the CSV and the
// cluster log (whose frame numbers run on from batch to batch), with ToT
// and with energies.
func TestTextPartsInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // parts on any machine
	for _, calibrated := range []bool{false, true} {
		small := fixture.Batches(t, "gamma", 60000, 1000, calibrated) // each below textparts.MinRows clusters
		all := fixture.Concat(small)
		if all.Len() < 4*textparts.MinRows {
			t.Fatalf("%d clusters: too few for four parts", all.Len())
		}
		for _, w := range []struct {
			name string
			open func(io.Writer) ClusterWriter
		}{
			{"csv", func(w io.Writer) ClusterWriter { cw, _ := NewClusterCSV(w); return cw }},
			{"clog", func(w io.Writer) ClusterWriter { return NewCLog(w) }},
		} {
			var parts, pieces bytes.Buffer
			for _, write := range []struct {
				buf     *bytes.Buffer
				batches []*pixel.Clusters
			}{{&parts, []*pixel.Clusters{all}}, {&pieces, small}} {
				cw := w.open(write.buf)
				for _, b := range write.batches {
					if err := cw.Write(b); err != nil {
						t.Fatal(err)
					}
				}
				if err := cw.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if parts.Len() == 0 || !bytes.Equal(parts.Bytes(), pieces.Bytes()) {
				t.Errorf("%s, calibrated %v: %d bytes in parts, %d a few clusters at a time", w.name, calibrated, parts.Len(), pieces.Len())
			}
		}
	}
}

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
