package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecl"
	"github.com/hitflow/hitflow/clue/cluesim"
	"github.com/hitflow/hitflow/device/opencl"
)

// CLUE times CLUE on the synthetic calorimeter of the paper's Table 1
// (100 layers, 1,000 to 1,000 x steps points per layer, bin 5 cm, dc 3,
// deltac = deltao 5, rhoc 8), on one worker and on all cores, and on the
// device of dev when not nil, with the time of each step (a device's
// kernel times, its transfers apart): the median of repeat runs after a
// warm-up run that sizes the reused buffers.
func CLUE(ctx context.Context, steps, repeat int, dev *opencl.Context, stdout io.Writer) (err error) {
	p := clue.Params{DC: 3, RhoC: 8, DeltaC: 5, DeltaO: 5, TileSize: 5}
	header(stdout)
	fmt.Fprintf(stdout, "CLUE's 2D scans: %s\n\n", clue.ScanPath())
	var device *cluecl.Clusterer
	if dev != nil {
		if device, err = cluecl.New(dev); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, device.Close()) }()
		fmt.Fprintf(stdout, "Device: %s\n\n", dev.Device)
	}
	fmt.Fprintf(stdout, "| points | where | index | density | nearest-higher | seeds/followers | expansion | overhead | of it on the host | total (ms) | upload | download |\n")
	fmt.Fprintf(stdout, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var pts *clue.Points
	workers := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		workers = append(workers, n)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	for s := 1; s <= steps; s++ {
		if pts, err = cluesim.Generate(cluesim.Options{PointsPerLayer: 1000 * s, Seed: uint64(s)}, pts); err != nil {
			return err
		}
		for _, w := range workers {
			c := &clue.Clusterer{Workers: w}
			m, err := medianRun(ctx, repeat, func() (cluecl.Timings, error) {
				_, err := c.Run(pts, p)
				return cluecl.Timings{Timings: c.Timings}, err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "| %d | %s | %s | %s | %s | %s | %s | %s | - | %s | - | - |\n", pts.Len(), cpuWorkers(w),
				ms(m.Index), ms(m.Density), ms(m.NearestHigher), ms(m.SeedsFollowers), ms(m.Expansion), ms(m.Overhead), ms(m.Total()))
		}
		if device == nil {
			continue
		}
		m, err := medianRun(ctx, repeat, func() (cluecl.Timings, error) {
			_, err := device.Run(pts, p)
			return device.Timings, err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "| %d | device | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", pts.Len(),
			ms(m.Index), ms(m.Density), ms(m.NearestHigher), ms(m.SeedsFollowers), ms(m.Expansion), ms(m.Overhead), ms(m.Host), ms(m.Total()),
			ms(m.Upload), ms(m.Download))
	}
	return nil
}

// medianRun runs once to warm up, then repeat times, and returns the
// timings of the median run.
func medianRun(ctx context.Context, repeat int, run func() (cluecl.Timings, error)) (cluecl.Timings, error) {
	if _, err := run(); err != nil {
		return cluecl.Timings{}, err
	}
	runs := make([]cluecl.Timings, repeat)
	for i := range runs {
		if ctx.Err() != nil {
			return cluecl.Timings{}, ctx.Err()
		}
		var err error
		if runs[i], err = run(); err != nil {
			return cluecl.Timings{}, err
		}
	}
	slices.SortFunc(runs, func(a, b cluecl.Timings) int { return int(a.Total() - b.Total()) })
	return runs[repeat/2], nil
}

// CLUEEvents times many events of the paper's calorimeter (layers of
// perLayer points each) clustered in one run, as a calorimeter's readout
// gives them: on all cores, and on the device of dev when not nil,
// transfers included; the median of repeat runs after a warm-up run.
func CLUEEvents(ctx context.Context, events, perLayer, repeat int, dev *opencl.Context, stdout io.Writer) (err error) {
	p := clue.Params{DC: 3, RhoC: 8, DeltaC: 5, DeltaO: 5, TileSize: 5}
	all := &clue.Points{Coords: make([][]float64, 2)}
	var one *clue.Points
	for e := range events {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if one, err = cluesim.Generate(cluesim.Options{PointsPerLayer: perLayer, Seed: uint64(e + 1)}, one); err != nil {
			return err
		}
		for d := range all.Coords {
			all.Coords[d] = append(all.Coords[d], one.Coords[d]...)
		}
		all.Layer = append(all.Layer, one.Layer...)
		all.Weight = append(all.Weight, one.Weight...)
		for range one.Len() {
			all.Event = append(all.Event, int32(e))
		}
	}
	header(stdout)
	if dev != nil {
		fmt.Fprintf(stdout, "Device: %s\n\n", dev.Device)
	}
	fmt.Fprintf(stdout, "| events | points | where | total (ms) | events/s | upload (ms) | download (ms) | host: batches prepared (ms) | host: numbered and copied out (ms) |\n|---|---|---|---|---|---|---|---|---|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	row := func(where string, run func() (cluecl.Timings, error)) error {
		var total []time.Duration
		var last cluecl.Timings
		if _, err := run(); err != nil {
			return err
		}
		for range repeat {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			t0 := time.Now()
			tm, err := run()
			if err != nil {
				return err
			}
			total, last = append(total, time.Since(t0)), tm
		}
		slices.Sort(total)
		m := total[repeat/2]
		up, down, prep, number := "-", "-", "-", "-"
		if where == "device" {
			up, down, prep, number = ms(last.Upload), ms(last.Download), ms(last.Host), ms(last.Numbering)
		}
		fmt.Fprintf(stdout, "| %d | %d | %s | %s | %.0f | %s | %s | %s | %s |\n", events, all.Len(), where, ms(m), float64(events)/m.Seconds(), up, down, prep, number)
		return nil
	}
	cpu := &clue.Clusterer{}
	if err := row(cpuWorkers(runtime.GOMAXPROCS(0)), func() (cluecl.Timings, error) {
		_, err := cpu.Run(all, p)
		return cluecl.Timings{Timings: cpu.Timings}, err
	}); err != nil || dev == nil {
		return err
	}
	device, err := cluecl.New(dev)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, device.Close()) }()
	return row("device", func() (cluecl.Timings, error) {
		_, err := device.Run(all, p)
		return device.Timings, err
	})
}
