package root

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
)

// BenchmarkReadROOT reads the ROOT file of fixture.Gamma back, hits
// included.
func BenchmarkReadROOT(b *testing.B) {
	all := fixture.Gamma()
	name := filepath.Join(b.TempDir(), "c.root")
	w, err := CreateClusters(name, Columns{})
	if err != nil {
		b.Fatal(err)
	}
	if err := errors.Join(w.Write(all), w.Close()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ReadClusters(name); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(all.Members.Len())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mhit/s")
}
