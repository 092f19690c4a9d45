package cluesim_test

import (
	"fmt"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluesim"
)

// PaperParams are the settings of the paper's Table 1.
var PaperParams = clue.Params{DC: 3, RhoC: 8, DeltaC: 5, DeltaO: 5, TileSize: 5}

// BenchmarkCLUE runs the paper's benchmark point: 100 layers of 1,000 to
// 10,000 points, on 1 worker and on all.
func BenchmarkCLUE(b *testing.B) {
	for _, per := range []int{1000, 5000, 10000} {
		pts, err := cluesim.Generate(cluesim.Options{PointsPerLayer: per, Seed: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("points=%d/workers=%d", per*100, w), func(b *testing.B) {
				c := &clue.Clusterer{Workers: w}
				if _, err := c.Run(pts, PaperParams); err != nil { // warm up the buffers
					b.Fatal(err)
				}
				b.ReportAllocs()
				var tm clue.Timings
				for b.Loop() {
					c.Run(pts, PaperParams)
					t := c.Timings
					tm.Index += t.Index
					tm.Density += t.Density
					tm.NearestHigher += t.NearestHigher
					tm.SeedsFollowers += t.SeedsFollowers
					tm.Expansion += t.Expansion
				}
				n := float64(b.N) * 1e6
				b.ReportMetric(float64(tm.Index.Nanoseconds())/n, "index-ms")
				b.ReportMetric(float64(tm.Density.Nanoseconds())/n, "density-ms")
				b.ReportMetric(float64(tm.NearestHigher.Nanoseconds())/n, "nh-ms")
				b.ReportMetric(float64(tm.SeedsFollowers.Nanoseconds())/n, "seeds-ms")
				b.ReportMetric(float64(tm.Expansion.Nanoseconds())/n, "expand-ms")
			})
		}
	}
}
