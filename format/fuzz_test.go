package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/pixel"
)

// FuzzReadFiles feeds damaged result files to every reader of the package
// (clusters whole and in batches, hits, CLUE results, J-PET events, Kind):
// an error naming the file, or columns of one length; never a panic, never
// a crash of the program (ROOT and Arrow files are read by hitflow's own
// readers, which check every size before they allocate: see
// format/root/read.go and format/columnar/ipc.go).
func FuzzReadFiles(f *testing.F) {
	dir := f.TempDir()
	seed := func(name string, write func(name string) error) {
		name = filepath.Join(dir, name)
		if err := write(name); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Ext(name), b)
		f.Add(filepath.Ext(name), b[:len(b)/2])
	}
	c := fixture.Two(&testing.T{}, true)
	pts := clue.Points{Coords: [][]float64{{0, 1, 5, 5.5}, {0, 0, 5, 5}}, Layer: []int32{0, 0, 1, 1}, Weight: []float64{1, 2, 1, 1}}
	tab := &cluecsv.Table{Coords: []string{"x", "y"}, Layer: true, Points: pts}
	res, err := clue.Run(&tab.Points, clue.Params{DC: 2, RhoC: 1, DeltaC: 3, DeltaO: 3}, 1)
	if err != nil {
		f.Fatal(err)
	}
	for _, ext := range []string{".csv", ".parquet", ".arrow", ".root"} {
		seed("clusters"+ext, func(name string) error {
			writeClusters(f, name, c)
			return nil
		})
		seed("clue"+ext, func(name string) error { return WriteCLUE(name, nil, tab, res) })
		if ext != ".root" {
			seed("hits"+ext, func(name string) error {
				w, err := CreateHits(name, nil)
				if err != nil {
					return err
				}
				if err := w.WriteMembers(c); err != nil {
					return err
				}
				return w.Close()
			})
		}
	}
	seed("stream.arrow", func(name string) error {
		writeStream(f, name, c)
		return nil
	})
	seed("events.parquet", func(name string) error {
		w, err := os.Create(name)
		if err != nil {
			return err
		}
		if err := columnar.WriteEvents(w, []jpet.Event{{ZU: 1, ZD: -2, DL: 3}, {ZU: 0, ZD: 4, DL: -1}}); err != nil {
			return err
		}
		return w.Close()
	})

	f.Fuzz(func(t *testing.T, ext string, data []byte) {
		if ext != ".csv" && ext != ".parquet" && ext != ".arrow" && ext != ".root" {
			return
		}
		name := filepath.Join(t.TempDir(), "fuzz"+ext)
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		failed := func(reader string, err error) bool {
			if err != nil && !strings.Contains(err.Error(), "fuzz"+ext) {
				t.Fatalf("%s: error without the file name: %v", reader, err)
			}
			return err != nil
		}
		if c, err := ReadClusters(name); !failed("ReadClusters", err) {
			n := c.Len()
			if len(c.Size) != n || len(c.FirstToA) != n || len(c.X) != n || len(c.YMax) != n || len(c.Max) != n {
				t.Fatalf("ReadClusters: %d clusters with columns of other lengths", n)
			}
		}
		err := ScanClusters(name, func(c *pixel.Clusters) error {
			if n := c.Len(); len(c.Size) != n || len(c.FirstToA) != n || len(c.X) != n || len(c.YMax) != n || len(c.Max) != n {
				t.Fatalf("ScanClusters: %d clusters with columns of other lengths", n)
			}
			return nil
		})
		failed("ScanClusters", err)
		if tab, r, err := ReadCLUE(name); !failed("ReadCLUE", err) {
			n := tab.Points.Len()
			if len(r.Rho) != n || len(r.ClusterID) != n || len(r.IsSeed) != n || tab.Layer && len(tab.Points.Layer) != n {
				t.Fatalf("ReadCLUE: %d points with columns of other lengths", n)
			}
			for _, x := range tab.Points.Coords {
				if len(x) != n {
					t.Fatalf("ReadCLUE: %d points with a coordinate of %d", n, len(x))
				}
			}
		}
		if ext != ".root" {
			if l, err := ReadHits(name); !failed("ReadHits", err) {
				n := l.Hits.Len()
				if len(l.Hits.X) != n || len(l.Hits.Y) != n || len(l.Hits.ToT) != n || len(l.Labels) != n {
					t.Fatalf("ReadHits: %d hits with columns of other lengths", n)
				}
			}
		}
		if ext == ".parquet" {
			_, err := columnar.ReadEvents(name)
			failed("ReadEvents", err)
		}
		_, err = Kind(name)
		failed("Kind", err)
	})
}
