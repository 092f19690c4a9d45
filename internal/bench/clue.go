package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluesim"
)

// CLUE times CLUE on the synthetic calorimeter of the paper's Table 1
// (100 layers, 1,000 to 1,000 x steps points per layer, bin 5 cm, dc 3,
// deltac = deltao 5, rhoc 8), on one worker and on all cores, with the
// time of each step: the median of repeat runs after a warm-up run that
// sizes the reused buffers.
func CLUE(ctx context.Context, steps, repeat int, stdout io.Writer) error {
	p := clue.Params{DC: 3, RhoC: 8, DeltaC: 5, DeltaO: 5, TileSize: 5}
	header(stdout)
	fmt.Fprintf(stdout, "CLUE's 2D scans: %s\n\n", clue.ScanPath())
	fmt.Fprintf(stdout, "| points | workers | index | density | nearest-higher | seeds/followers | expansion | overhead | total (ms) |\n")
	fmt.Fprintf(stdout, "|---|---|---|---|---|---|---|---|---|\n")
	var pts *clue.Points
	workers := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		workers = append(workers, n)
	}
	for s := 1; s <= steps; s++ {
		var err error
		if pts, err = cluesim.Generate(cluesim.Options{PointsPerLayer: 1000 * s, Seed: uint64(s)}, pts); err != nil {
			return err
		}
		for _, w := range workers {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c := &clue.Clusterer{Workers: w}
			if _, err := c.Run(pts, p); err != nil {
				return err
			}
			runs := make([]clue.Timings, repeat)
			for i := range runs {
				c.Run(pts, p)
				runs[i] = c.Timings
			}
			slices.SortFunc(runs, func(a, b clue.Timings) int { return int(a.Total() - b.Total()) })
			m := runs[repeat/2]
			ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
			fmt.Fprintf(stdout, "| %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", pts.Len(), w,
				ms(m.Index), ms(m.Density), ms(m.NearestHigher), ms(m.SeedsFollowers), ms(m.Expansion), ms(m.Overhead), ms(m.Total()))
		}
	}
	return nil
}
