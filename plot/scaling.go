package plot

import (
	"fmt"
	"image/color"
	"io"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hitflow/hitflow/pixel"
)

// Series is one line of a scaling plot: the rate of a mode on a dataset
// per worker count.
type Series struct {
	Dataset string
	Mode    pixel.Mode
	Workers []int
	Rate    []float64
}

// guidesMost is the most series of several points that get a line of
// perfect scaling each: past it, the lines hide the data (the table
// beside the figure has the efficiencies).
const guidesMost = 6

// Scaling draws rate (Mhit/s) against workers: a colour per
// dataset, a line per mode (solid, chunked dashed), the sequential
// clusterer as a ring, and, for a few series, grey dotted lines of
// perfect scaling from their one-worker rate. The legend names the
// datasets and the modes once each. format is "png" or "svg".
func Scaling(w io.Writer, title string, series []Series, format string) error {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "workers"
	p.Y.Label.Text = "Mhit/s"
	p.Y.Min = 0
	p.Legend.Top = false
	p.Legend.Left = false
	maxWorkers, top, several := 1, 0.0, 0
	var datasets []string
	var modes []pixel.Mode
	for _, s := range series {
		if len(s.Workers) != len(s.Rate) || len(s.Workers) == 0 {
			return fmt.Errorf("series %s %v has %d worker counts and %d rates", s.Dataset, s.Mode, len(s.Workers), len(s.Rate))
		}
		for i, n := range s.Workers {
			maxWorkers, top = max(maxWorkers, n), max(top, s.Rate[i])
		}
		if len(s.Workers) > 1 {
			several++
		}
		if !slices.Contains(datasets, s.Dataset) {
			datasets = append(datasets, s.Dataset)
		}
		if !slices.Contains(modes, s.Mode) {
			modes = append(modes, s.Mode)
		}
	}
	guides := several <= guidesMost
	for _, s := range series {
		xy := make(plotter.XYs, len(s.Workers))
		for i := range xy {
			xy[i].X, xy[i].Y = float64(s.Workers[i]), s.Rate[i]
		}
		line, points := modeStyle(s.Mode, clusterColor(int32(slices.Index(datasets, s.Dataset))))
		line.XYs, points.XYs = xy, xy
		if len(xy) == 1 {
			p.Add(points)
			continue
		}
		if one := slices.Index(s.Workers, 1); one >= 0 && guides {
			ideal, err := plotter.NewLine(plotter.XYs{{X: 1, Y: s.Rate[one]}, {X: float64(maxWorkers), Y: s.Rate[one] * float64(maxWorkers)}})
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			ideal.LineStyle = guideStyle
			p.Add(ideal)
			top = max(top, s.Rate[one]*float64(maxWorkers))
		}
		p.Add(line, points)
	}
	for k, d := range datasets {
		line, points := modeStyle(pixel.LanesMode, clusterColor(int32(k)))
		p.Legend.Add(d, line, points)
	}
	for _, m := range modes {
		line, points := modeStyle(m, color.Black)
		if m == pixel.Sequential {
			p.Legend.Add(m.String(), points)
		} else {
			p.Legend.Add(m.String(), line, points)
		}
	}
	if guides {
		p.Legend.Add("perfect scaling", &plotter.Line{LineStyle: guideStyle})
	}
	p.Y.Max = top * 1.05
	// Room on the right for the legend.
	p.X.Min, p.X.Max = 0.5, float64(maxWorkers)+0.5+0.15*float64(maxWorkers)
	ticks := make([]gplot.Tick, maxWorkers)
	for i := range ticks {
		ticks[i] = gplot.Tick{Value: float64(i + 1), Label: fmt.Sprint(i + 1)}
	}
	p.X.Tick.Marker = gplot.ConstantTicks(ticks)
	// Tall enough for a legend entry a row.
	height := max(Width*3/4, vg.Length(len(datasets)+len(modes)+3)*5*vg.Millimeter)
	return writeFigure(w, p, nil, Width, height, format)
}

// modeStyle is the line and markers of a mode's series in colour c:
// solid with dots, dashed for chunked, a ring alone for sequential.
func modeStyle(m pixel.Mode, c color.Color) (*plotter.Line, *plotter.Scatter) {
	line := &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.5)}}
	points := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}}
	switch m {
	case pixel.Chunked:
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	case pixel.Sequential:
		points.Shape, points.Radius = draw.RingGlyph{}, vg.Points(4)
	}
	return line, points
}

// guideStyle draws the perfect-scaling lines: grey, dotted.
var guideStyle = draw.LineStyle{Color: color.Gray{Y: 170}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
