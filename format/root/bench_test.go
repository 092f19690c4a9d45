package root

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
)

// BenchmarkReadROOT reads the ROOT file of fixture.Gamma back: through the
// child process that ReadClusters starts, and in this process, to show
// what the child costs.
func BenchmarkReadROOT(b *testing.B) {
	all := fixture.Gamma()
	name := filepath.Join(b.TempDir(), "c.root")
	w, err := CreateClusters(name)
	if err != nil {
		b.Fatal(err)
	}
	if err := errors.Join(w.Write(all), w.Close()); err != nil {
		b.Fatal(err)
	}
	for _, how := range []string{"child", "here"} {
		b.Run(how, func(b *testing.B) {
			for b.Loop() {
				var err error
				if how == "child" {
					_, err = ReadClusters(name)
				} else {
					err = readROOTHere("clusters", name).err()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(all.Len())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mclusters/s")
		})
	}
}
