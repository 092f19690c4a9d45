package cluecsv

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluesim"
)

// BenchmarkCSV reads and writes the paper's calorimeter points (10^5,
// with their clustering results when written), in memory: the text cost
// of `hitflow clue` without the file system.
func BenchmarkCSV(b *testing.B) {
	pts, err := cluesim.Generate(cluesim.Options{PointsPerLayer: 1000, Seed: 1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	t := &Table{Coords: []string{"x", "y"}, Layer: true, Points: *pts}
	r, err := (&clue.Clusterer{}).Run(pts, clue.Params{DC: 3, RhoC: 8, DeltaC: 5, DeltaO: 5, TileSize: 5})
	if err != nil {
		b.Fatal(err)
	}
	var text bytes.Buffer
	if err := WritePoints(&text, t); err != nil {
		b.Fatal(err)
	}
	n := float64(pts.Len())
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			if err := Write(io.Discard, t, r); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoint/s")
	})
	// Into a file: the kernel's copies of the text count too.
	b.Run("file", func(b *testing.B) {
		name := filepath.Join(b.TempDir(), "out.csv")
		for b.Loop() {
			f, err := os.Create(name)
			if err != nil {
				b.Fatal(err)
			}
			if err := Write(f, t, r); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoint/s")
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(text.Len()))
		for b.Loop() {
			if _, err := Read(bytes.NewReader(text.Bytes()), "bench.csv"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoint/s")
	})
}
