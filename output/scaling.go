package output

import (
	"fmt"
	"image/color"
	"io"
	"slices"

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
// of markers per series, a series of one point (the sequential
// clusterer) as a ring, and grey dotted lines of perfect scaling from the
// one-worker rate of each series of several points; format is "png" or
// "svg".
func WriteScalingPlot(w io.Writer, title string, series []Series, format string) error {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "workers"
	p.Y.Label.Text = "Mhit/s"
	p.Y.Min = 0
	p.Legend.Top = false
	p.Legend.Left = false
	maxWorkers, top := 1, 0.0
	for _, s := range series {
		if len(s.Workers) != len(s.Rate) || len(s.Workers) == 0 {
			return fmt.Errorf("output: series %q has %d worker counts and %d rates", s.Label, len(s.Workers), len(s.Rate))
		}
		for i, n := range s.Workers {
			maxWorkers, top = max(maxWorkers, n), max(top, s.Rate[i])
		}
	}
	for _, s := range series {
		xy := make(plotter.XYs, len(s.Workers))
		for i := range xy {
			xy[i].X, xy[i].Y = float64(s.Workers[i]), s.Rate[i]
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return fmt.Errorf("output: plot: %w", err)
		}
		c := clusterColor(int32(s.Color))
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		points.Shape = draw.CircleGlyph{}
		if len(xy) == 1 {
			points.Shape, points.Radius = draw.RingGlyph{}, vg.Points(4)
			p.Add(points)
			p.Legend.Add(s.Label, points)
			continue
		}
		if one := slices.Index(s.Workers, 1); one >= 0 {
			ideal, err := plotter.NewLine(plotter.XYs{{X: 1, Y: s.Rate[one]}, {X: float64(maxWorkers), Y: s.Rate[one] * float64(maxWorkers)}})
			if err != nil {
				return fmt.Errorf("output: plot: %w", err)
			}
			ideal.LineStyle = guideStyle
			p.Add(ideal)
			top = max(top, s.Rate[one]*float64(maxWorkers))
		}
		p.Add(line, points)
		p.Legend.Add(s.Label, line, points)
	}
	p.Legend.Add("perfect scaling", guideLine())
	p.Y.Max = top * 1.05
	// Room on the right for the legend.
	p.X.Min, p.X.Max = 0.5, float64(maxWorkers)+0.5+0.15*float64(maxWorkers)*float64(min(len(series), 12))/4
	ticks := make([]plot.Tick, maxWorkers)
	for i := range ticks {
		ticks[i] = plot.Tick{Value: float64(i + 1), Label: fmt.Sprint(i + 1)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	return writeFigure(w, p, nil, PlotSize, PlotSize*3/4, format)
}

// guideLine is the legend's sample of the perfect-scaling lines.
func guideLine() plot.Thumbnailer {
	return &plotter.Line{LineStyle: guideStyle}
}

// guideStyle draws the perfect-scaling lines: grey, dotted.
var guideStyle = draw.LineStyle{Color: color.Gray{Y: 170}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
