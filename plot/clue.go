package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"go-hep.org/x/hep/hplot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hitflow/hitflow/clue"
)

// CLUEOptions describes a picture of CLUE's result: the points projected on
// two coordinates, coloured by cluster, seeds marked with a black cross,
// outliers grey.
type CLUEOptions struct {
	X, Y   int       // coordinate indices of the axes
	Names  []string  // the coordinates' column names; x0, x1 ... when empty
	Layer  *int32    // only this layer, or all when nil
	Title  string    // the counts of the clusters and outliers drawn are added
	Size   vg.Length // width and height; 0 gives 16 cm
	Format string    // "png" (default) or "svg"
}

// clusterColor spreads hues by the golden angle so neighbouring ids differ.
func clusterColor(id int32) color.Color {
	h := math.Mod(float64(id)*0.618033988749895, 1)
	return hsv(h, 0.75, 0.9)
}

func hsv(h, s, v float64) color.RGBA {
	i := int(h * 6)
	f := h*6 - float64(i)
	p, q, t := v*(1-s), v*(1-f*s), v*(1-(1-f)*s)
	var r, g, b float64
	switch i % 6 {
	case 0:
		r, g, b = v, t, p
	case 1:
		r, g, b = q, v, p
	case 2:
		r, g, b = p, v, t
	case 3:
		r, g, b = p, q, v
	case 4:
		r, g, b = t, p, v
	default:
		r, g, b = v, p, q
	}
	return color.RGBA{uint8(255 * r), uint8(255 * g), uint8(255 * b), 255}
}

// CLUE draws the picture.
func CLUE(w io.Writer, pts *clue.Points, r *clue.Result, o CLUEOptions) error {
	if o.X < 0 || o.Y < 0 || o.X >= pts.Dim() || o.Y >= pts.Dim() {
		return fmt.Errorf("plot axes %d, %d outside the %d coordinates", o.X, o.Y, pts.Dim())
	}
	var sel []int
	for i := range pts.Len() {
		if o.Layer == nil || len(pts.Layer) > 0 && pts.Layer[i] == *o.Layer || len(pts.Layer) == 0 && *o.Layer == 0 {
			sel = append(sel, i)
		}
	}
	var seeds []int
	outliers := 0
	for _, i := range sel {
		if r.IsSeed[i] {
			seeds = append(seeds, i) // a cluster's one seed
		}
		if r.ClusterID[i] < 0 {
			outliers++
		}
	}
	p := hplot.New()
	p.X.Tick.Marker, p.Y.Tick.Marker = hplot.Ticks{N: 6}, hplot.Ticks{N: 6}
	// The key goes in the title: a legend box would hide points.
	p.Title.Text = fmt.Sprintf("%s: %d clusters, %d outliers\ncolour: cluster; cross: seed; grey: outlier", o.Title, len(seeds), outliers)
	name := func(d int) string {
		if d < len(o.Names) {
			return o.Names[d] + " (input units)"
		}
		return fmt.Sprintf("x%d (input units)", d)
	}
	p.X.Label.Text, p.Y.Label.Text = name(o.X), name(o.Y)
	xy := func(idx []int) plotter.XYs {
		out := make(plotter.XYs, len(idx))
		for k, i := range idx {
			out[k].X, out[k].Y = pts.Coords[o.X][i], pts.Coords[o.Y][i]
		}
		return out
	}
	radius := vg.Points(1.5)
	if len(sel) > 20000 {
		radius = vg.Points(0.6)
	}
	all, err := plotter.NewScatter(xy(sel))
	if err != nil {
		return err
	}
	colours := make([]color.Color, slices.Max(append([]int32{-1}, r.ClusterID...))+1) // once, not a point at a time
	for id := range colours {
		colours[id] = clusterColor(int32(id))
	}
	all.GlyphStyleFunc = func(k int) draw.GlyphStyle {
		id := r.ClusterID[sel[k]]
		if id < 0 {
			return draw.GlyphStyle{Color: color.Gray{170}, Radius: radius * 0.7, Shape: draw.CircleGlyph{}}
		}
		return draw.GlyphStyle{Color: colours[id], Radius: radius, Shape: draw.CircleGlyph{}}
	}
	p.Add(discs{newOuterScatter(all)})
	if len(seeds) > 0 {
		s, err := plotter.NewScatter(xy(seeds))
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: radius * 2.5, Shape: draw.CrossGlyph{}}
		p.Add(newOuterScatter(s))
	}
	size := o.Size
	if size == 0 {
		size = 16 * vg.Centimeter
	}
	format := o.Format
	if format == "" {
		format = "png"
	}
	wt, err := p.WriterTo(size, size, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
