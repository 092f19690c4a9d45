package output

import (
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line of a scaling plot: a rate per worker count.
type Series struct {
	Label   string
	Workers []int
	Rate    []float64
	Color   int  // series with the same Color share it
	Dashed  bool // a dashed line
}

// WriteScalingPlot draws rate (Mhit/s) against workers, one line and set
// of markers per series; format is "png" or "svg".
func WriteScalingPlot(w io.Writer, title string, series []Series, format string) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "workers"
	p.Y.Label.Text = "Mhit/s"
	p.Y.Min = 0
	p.Legend.Top = false
	p.Legend.Left = false
	maxWorkers := 1
	for _, s := range series {
		if len(s.Workers) != len(s.Rate) || len(s.Workers) == 0 {
			return fmt.Errorf("output: series %q has %d worker counts and %d rates", s.Label, len(s.Workers), len(s.Rate))
		}
		xy := make(plotter.XYs, len(s.Workers))
		for i := range xy {
			xy[i].X, xy[i].Y = float64(s.Workers[i]), s.Rate[i]
			maxWorkers = max(maxWorkers, s.Workers[i])
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		c := clusterColor(int32(s.Color))
		line.Color = c
		line.Width = vg.Points(1.5)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		points.Color = c
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(s.Label, line, points)
	}
	// Room on the right for the legend.
	p.X.Min, p.X.Max = 0.5, float64(maxWorkers)+0.5+0.15*float64(maxWorkers)*float64(min(len(series), 12))/4
	ticks := make([]plot.Tick, maxWorkers)
	for i := range ticks {
		ticks[i] = plot.Tick{Value: float64(i + 1), Label: fmt.Sprint(i + 1)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if format == "" {
		format = "png"
	}
	wt, err := p.WriterTo(16*vg.Centimeter, 12*vg.Centimeter, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
