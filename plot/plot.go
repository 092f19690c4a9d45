package plot

import (
	"cmp"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go-hep.org/x/hep/hbook"
	"go-hep.org/x/hep/hplot"
	xdraw "golang.org/x/image/draw"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// Width is the width of the histograms, which are 3:4 high; maps are
// sized by their data area (mapArea).
const Width = 16 * vg.Centimeter

// writeFigure renders p, with a colour bar when bar is set, as png or
// svg.
func writeFigure(w io.Writer, p *hplot.Plot, bar *hplot.Legend, width, height vg.Length, format string) error {
	var d hplot.Drawer = p
	if bar != nil {
		d = hplot.Figure(p, hplot.WithLegend(*bar))
	}
	wt, err := hplot.WriterTo(d, width, height, formatOr(format))
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}

// writeMap is writeFigure for a map, sized for its data area to be dw
// by dh (so that its cells are square).
func writeMap(w io.Writer, p *hplot.Plot, bar *hplot.Legend, dw, dh vg.Length, format string) error {
	fw, fh := figureSize(p, bar, dw, dh)
	return writeFigure(w, p, bar, fw, fh, format)
}

// formatOr is the figure format, png when not given.
func formatOr(format string) string {
	if format == "" {
		return "png"
	}
	return format
}

// newPlot is hplot's plot with about six round ticks on each axis: the
// default gives two or three, with two decimals even on counts and
// pixels.
func newPlot() *hplot.Plot {
	p := hplot.New()
	p.X.Tick.Marker, p.Y.Tick.Marker = hplot.Ticks{N: 6}, hplot.Ticks{N: 6}
	return p
}

// histogram draws h as a filled histogram, with a logarithmic y axis for
// distributions that span decades, and the x ticks xticks if not nil.
func histogram(w io.Writer, h *hbook.H1D, logY bool, xticks gplot.Ticker, title, xlabel, ylabel, format string) error {
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	hh := hplot.NewH1D(h, hplot.WithLogY(logY))
	hh.FillColor = color.RGBA{R: 80, G: 120, B: 200, A: 255}
	hh.LineStyle.Color = color.RGBA{R: 30, G: 50, B: 110, A: 255}
	p.Add(hh)
	if xticks != nil {
		p.X.Tick.Marker = xticks
	}
	if logY {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	} else {
		p.Y.Min = 0
	}
	return writeFigure(w, p, nil, Width, Width*3/4, format)
}

// decadeTicks mark an axis of log10 values with the values themselves:
// 1, 10, 100 ... at the decades, unlabelled ticks at 2 to 9 times them.
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []gplot.Tick {
	var ticks []gplot.Tick
	for d := math.Floor(lo); d <= hi; d++ {
		for m := 1; m < 10; m++ {
			v := d + math.Log10(float64(m))
			if v < lo || v > hi {
				continue
			}
			t := gplot.Tick{Value: v}
			if m == 1 {
				t.Label = strconv.FormatFloat(math.Pow(10, d), 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// pixelTicks mark a pixel axis: every pixel on a span of a few, where
// round ticks would fall between the pixels (168.5, 169.0), and round
// ticks, whole numbers by then, on longer spans.
type pixelTicks struct{}

func (pixelTicks) Ticks(lo, hi float64) []gplot.Tick {
	if hi-lo > 12 {
		return hplot.Ticks{N: 6}.Ticks(lo, hi)
	}
	var ticks []gplot.Tick
	for v := math.Ceil(lo); v <= hi; v++ {
		ticks = append(ticks, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
}

// classTicks name the bins of the classes.
type classTicks struct{}

func (classTicks) Ticks(lo, hi float64) []gplot.Tick {
	var ticks []gplot.Tick
	for _, k := range analysis.Classes {
		if v := float64(k) + 0.5; v >= lo && v <= hi {
			ticks = append(ticks, gplot.Tick{Value: v, Label: strings.ReplaceAll(k.String(), "_", " ")})
		}
	}
	return ticks
}

// seconds writes a duration given in seconds to three significant digits
// in the unit that reads best: 81.5 ms, 1.61 s, 250 ns.
func seconds(v float64) string {
	for _, u := range []struct {
		scale float64
		name  string
	}{{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}} {
		if v >= u.scale {
			return scaleLabel(v/u.scale, false) + " " + u.name
		}
	}
	return scaleLabel(v/1e-9, false) + " ns"
}

// CountImage draws the counts of an image of cluster centroids (sum, as
// im.Sum gives them, on im's bins) with a colour bar, on a log scale
// where they span two decades or more; empty bins are white. An image
// over 2048 bins wide is drawn with 2, 4, ... bins summed across and up,
// so that no count vanishes from a figure of a few thousand dots. title
// has a %s for the words that say the scale is a log scale.
func CountImage(w io.Writer, sum []uint64, im *analysis.Image, title, format string) error {
	r := 1
	for im.Width/r > 2048 {
		r *= 2
	}
	nx, ny := (im.Width+r-1)/r, (im.Height+r-1)/r
	counts := make([]uint64, nx*ny)
	for k, n := range sum {
		counts[k/im.Width/r*nx+k%im.Width/r] += n
	}
	g := countGrid{z: make([]float64, nx*ny), nx: nx, ny: ny, step: float64(r) / float64(im.Scale)}
	most := uint64(0)
	for k, n := range counts {
		most = max(most, n)
		g.z[k] = math.NaN() // empty: white
		if n > 0 {
			g.z[k] = float64(n)
		}
	}
	if most == 0 {
		return fmt.Errorf("no clusters in the image to plot")
	}
	log10 := most >= 100 // the fewest in a bin with any is one
	scale := ""
	if log10 {
		scale = ", log scale"
		for k, v := range g.z {
			g.z[k] = math.Log10(v) // NaN stays NaN
		}
	}
	p := newPlot()
	p.Title.Text = fmt.Sprintf(title, scale)
	p.X.Label.Text = "x (pixel)"
	p.Y.Label.Text = "y (pixel)"
	dw, dh := mapArea(nx, ny)
	hm := plotter.NewHeatMap(g, onWhite(dh))
	hm.NaN = color.White
	hm.Min, hm.Max = 0, float64(most) // counts: a single cluster is not the darkest colour
	if log10 {
		hm.Max = math.Log10(float64(most))
	}
	p.Add(sharp{hm})
	what := "clusters per pixel"
	switch {
	case im.Scale%r == 0 && r < im.Scale:
		what = fmt.Sprintf("clusters per 1/%d pixel", im.Scale/r)
	case r != im.Scale:
		what = fmt.Sprintf("clusters per %.4gx%.4g pixels", g.step, g.step)
	}
	return writeMap(w, p, colourBar(p, hm, log10, what), dw, dh, format)
}

// countGrid is a grid of values in square bins of side step, the first
// centred at step/2 - 0.5 (pixel x spans x-0.5 to x+0.5), row r at
// z[r*nx:].
type countGrid struct {
	z      []float64
	nx, ny int
	step   float64
}

func (g countGrid) Dims() (int, int)   { return g.nx, g.ny }
func (g countGrid) Z(c, r int) float64 { return g.z[r*g.nx+c] }
func (g countGrid) X(c int) float64    { return (float64(c)+0.5)*g.step - 0.5 }
func (g countGrid) Y(r int) float64    { return (float64(r)+0.5)*g.step - 0.5 }

// mapSide is the longer side of a map's or an image's data area.
const mapSide = 12 * vg.Centimeter

// mapArea is the size of the data area of a map of nx by ny square cells:
// mapSide along the longer side, or more for a dot per cell in a PNG (a
// 1027-pixel row drawn on 600 dots loses single pixels, the hot ones
// among them); cells stay square unless one side is over 8 times the
// other, when the shorter is drawn an eighth of the longer (the rows of
// a flatter map could not be seen).
func mapArea(nx, ny int) (vg.Length, vg.Length) {
	long := max(mapSide, vg.Length(max(nx, ny)+2)*vg.Inch/pngDPI)
	ratio := math.Max(0.125, math.Min(8, float64(ny)/float64(nx)))
	if ratio <= 1 {
		return long, long * vg.Length(ratio)
	}
	return long / vg.Length(ratio), long
}

// figureSize is the size of the figure of p, with its colour bar if bar
// is set, whose data area is dw by dh. The axes, the title and the bar
// take the same room whatever the figure's size (hplot.Fig gives the
// bar its width and a millimetre), so a figure of any size measures it.
func figureSize(p *hplot.Plot, bar *hplot.Legend, dw, dh vg.Length) (vg.Length, vg.Length) {
	probe := draw.Canvas{Canvas: new(recorder.Canvas), Rectangle: vg.Rectangle{Max: vg.Point{X: dw + Width, Y: dh + Width}}}
	area := probe
	if bar != nil {
		r := bar.Rectangle(probe)
		area = draw.Crop(probe, 0, -(r.Max.X-r.Min.X)-vg.Millimeter, 0, 0)
	}
	da := p.Plot.DataCanvas(area)
	return probe.Max.X - (da.Max.X - da.Min.X) + dw, probe.Max.Y - (da.Max.Y - da.Min.Y) + dh
}

// pngDPI is the resolution hplot renders PNG figures at.
const pngDPI = 96

// sensorBins is one bin per pixel of a sensor, pixel x spanning x-0.5 to
// x+0.5: whole-number ticks fall on the pixels they name, and a centroid
// goes to its nearest pixel.
func sensorBins(width, height int) *hbook.H2D {
	return hbook.NewH2D(width, -0.5, float64(width)-0.5, height, -0.5, float64(height)-0.5)
}

// HitMap draws the hits of every pixel on the sensor on a
// logarithmic colour scale (hot pixels fire millions of times, the rest
// a few), pixels without hits white, and circles the hot pixels given:
// one pixel of a sensor drawn on a page may be smaller than a dot.
func HitMap(w io.Writer, counts *pixel.HitCounts, hot []pixel.PixelHits, title, format string) error {
	width, height := counts.Size()
	h := sensorBins(width, height)
	grid := make([]float64, width*height)
	fired := 0
	for y := range height {
		for x := range width {
			v := math.NaN()
			if n := counts.Count(x, y); n > 0 {
				v = math.Log10(float64(n))
				fired++
			}
			grid[y*width+x] = v // row r of the heat map is y = r
		}
	}
	if fired == 0 {
		return fmt.Errorf("no hits to plot")
	}
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "x (pixel)"
	p.Y.Label.Text = "y (pixel)"
	// Light for a few hits, dark for many: the hot pixels stand out. The
	// two lightest colours go: a pixel that fired once would be hard to
	// tell from one that did not.
	pal, err := brewer.GetPalette(brewer.TypeSequential, "YlOrRd", 9)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	hm := newHeat(h, grid, fixedPalette(pal.Colors()[2:]))
	dw, dh := mapArea(width, height)
	p.Add(sharp{hm.HeatMap})
	if len(hot) > 0 {
		xy := make(plotter.XYs, len(hot))
		for i, q := range hot {
			xy[i].X, xy[i].Y = float64(q.X), float64(q.Y)
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{B: 200, A: 255}, Radius: vg.Points(5), Shape: draw.RingGlyph{}}
		p.Add(s)
		p.Legend.Add("hot pixels", s)
	}
	return writeMap(w, p, colourBar(p, hm.HeatMap, true, "hits per pixel"), dw, dh, format)
}

// colourBar is the colour bar of a heat map, titled with what the
// colours count, in the plot's own font, with about five values written
// out, or on a map of log10 values the decades, as counts (hplot's own
// labels are %.2g, 180 as 1.8e+02).
func colourBar(p *hplot.Plot, hm *plotter.HeatMap, log10 bool, what string) *hplot.Legend {
	bar := hplot.NewLegend()
	bar.TextStyle = p.Legend.TextStyle
	thumbs := plotter.PaletteThumbnailers(hm.Palette)
	lo, hi := hm.Min, hm.Max
	n := len(thumbs)
	step := (hi - lo) / float64(n) // the values of row i: lo+i*step to lo+(i+1)*step
	labelled := make([]string, n)
	labelled[0], labelled[n-1] = scaleLabel(lo, log10), scaleLabel(hi, log10)
	// Round values (decades on a log scale) on the rows that hold them,
	// unless a neighbour is written already: labels on adjacent rows
	// overlap.
	free := func(i int) bool { return i > 0 && i < n-1 && labelled[i-1] == "" && labelled[i+1] == "" }
	if log10 {
		for d := math.Ceil(lo); d < hi; d++ {
			if i := int((d - lo) / step); free(i) {
				labelled[i] = scaleLabel(d, true)
			}
		}
	} else {
		for _, t := range (hplot.Ticks{N: 5}).Ticks(lo, hi) {
			if i := int((t.Value - lo) / step); t.Label != "" && free(i) {
				labelled[i] = scaleLabel(t.Value, false)
			}
		}
	}
	bar.Add(what, blank{})
	for i := n - 1; i >= 0; i-- {
		bar.Add(labelled[i], thumbs[i])
	}
	bar.Top = true
	return &bar
}

// blank is a legend entry without a thumbnail: the colour bar's title.
type blank struct{}

func (blank) Thumbnail(*draw.Canvas) {}

// scaleLabel writes v (or 10^v) without an exponent where it reads
// well: whole from 100 on, to three significant digits below, down to
// 0.001.
func scaleLabel(v float64, log10 bool) string {
	if log10 {
		v = math.Pow(10, v)
	}
	switch a := math.Abs(v); {
	case a >= 1e6 || a < 1e-3 && a != 0:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// sharp draws a heat map as an image of its cells (one object in an SVG,
// whatever the cells), with the cells' edges sharp: the canvases draw an
// image scaled with bilinear filtering, which blurs a few large cells
// into gradients and blends neighbours. The image handed to the canvas
// has a pixel per dot of the figure, each the colour of its cell.
type sharp struct{ *plotter.HeatMap }

func (h sharp) Plot(c draw.Canvas, p *gplot.Plot) {
	raster := *h.HeatMap
	raster.Rasterized = true
	var rec recorder.Canvas
	raster.Plot(draw.Canvas{Canvas: &rec, Rectangle: c.Rectangle}, p)
	dpi := dpiOf(c)
	for _, a := range rec.Actions {
		if im, ok := a.(*recorder.DrawImage); ok {
			size := im.Rectangle.Size()
			c.DrawImage(im.Rectangle, upscale(im.Image, int(math.Round(size.X.Dots(dpi))), int(math.Round(size.Y.Dots(dpi)))))
			continue
		}
		a.ApplyTo(c.Canvas)
	}
}

// GlyphBoxes are the heat map's boxes of its corner cells only: a plot
// pads its data area by the outermost boxes, and the heat map's own, a
// box for each of a sensor map's million cells, took a third of drawing
// it.
func (h sharp) GlyphBoxes(p *gplot.Plot) []gplot.GlyphBox {
	corners := *h.HeatMap
	corners.GridXYZ = cornerGrid{h.GridXYZ}
	return corners.GlyphBoxes(p)
}

// cornerGrid is the first and last columns and rows of a grid.
type cornerGrid struct{ plotter.GridXYZ }

func (g cornerGrid) Dims() (int, int) {
	c, r := g.GridXYZ.Dims()
	return min(c, 2), min(r, 2)
}
func (g cornerGrid) X(c int) float64    { return g.GridXYZ.X(g.last(c, 0)) }
func (g cornerGrid) Y(r int) float64    { return g.GridXYZ.Y(g.last(r, 1)) }
func (g cornerGrid) Z(c, r int) float64 { return g.GridXYZ.Z(g.last(c, 0), g.last(r, 1)) }

// last maps index 1 of dimension dim (0 columns, 1 rows) to the grid's
// last.
func (g cornerGrid) last(i, dim int) int {
	c, r := g.GridXYZ.Dims()
	return i * ([2]int{c, r}[dim] - 1)
}

// dpiOf is the resolution images are drawn at on the canvas: its own, or
// for an SVG, drawn at any size, twice a PNG's.
func dpiOf(c draw.Canvas) float64 {
	if d, ok := c.Canvas.(interface{ DPI() float64 }); ok {
		return d.DPI()
	}
	return 2 * pngDPI
}

// outerScatter is a scatter whose glyph boxes are those of its outermost
// points only, for each size of glyph: a plot pads its data area by the
// outermost boxes, and a box a point, gathered several times over, took
// half of drawing a million points. The points and their styles must not
// change once it is made.
type outerScatter struct {
	*plotter.Scatter
	outer *plotter.Scatter // the outermost points, with their styles
}

func newOuterScatter(s *plotter.Scatter) outerScatter {
	// The points of least and most x and y, of each glyph's extent.
	ends := map[vg.Rectangle]*[4]int{}
	xy := s.XYs
	for i, q := range xy {
		r := styleOf(s, i).Rectangle()
		e := ends[r]
		if e == nil {
			ends[r] = &[4]int{i, i, i, i}
			continue
		}
		if q.X < xy[e[0]].X {
			e[0] = i
		}
		if q.X > xy[e[1]].X {
			e[1] = i
		}
		if q.Y < xy[e[2]].Y {
			e[2] = i
		}
		if q.Y > xy[e[3]].Y {
			e[3] = i
		}
	}
	var keep []int
	for _, e := range ends {
		keep = append(keep, e[:]...)
	}
	slices.Sort(keep) // in the points' order, whatever the map's
	outer := *s
	outer.XYs = make(plotter.XYs, len(keep))
	for k, i := range keep {
		outer.XYs[k] = xy[i]
	}
	outer.GlyphStyleFunc = func(k int) draw.GlyphStyle { return styleOf(s, keep[k]) }
	return outerScatter{s, &outer}
}

func (s outerScatter) GlyphBoxes(p *gplot.Plot) []gplot.GlyphBox { return s.outer.GlyphBoxes(p) }

// styleOf is the glyph style of point i of s.
func styleOf(s *plotter.Scatter, i int) draw.GlyphStyle {
	if s.GlyphStyleFunc != nil {
		return s.GlyphStyleFunc(i)
	}
	return s.GlyphStyle
}

// discs draws the circles of a scatter as one image, a pixel a dot of the
// figure, each circle's edge smoothed by the share of a pixel it covers:
// the canvases fill every circle as a path, which took four fifths of
// drawing a million points (and an SVG of them was a million elements).
// Glyphs of other shapes are drawn as the canvas draws them, under the
// circles.
type discs struct{ outerScatter }

func (s discs) Plot(c draw.Canvas, p *gplot.Plot) {
	dpi := dpiOf(c)
	trX, trY := p.Transforms(&c)
	// The image spans the data area and the glyphs that reach past it.
	var reach vg.Length
	for i := range s.outer.XYs {
		reach = max(reach, styleOf(s.outer, i).Radius)
	}
	area := vg.Rectangle{Min: c.Min.Sub(vg.Point{X: reach, Y: reach}), Max: c.Max.Add(vg.Point{X: reach, Y: reach})}
	size := area.Size()
	img := image.NewRGBA(image.Rect(0, 0, int(math.Round(size.X.Dots(dpi))), int(math.Round(size.Y.Dots(dpi)))))
	// Dots to the image's pixels, which the rounding made a little larger
	// or smaller.
	sx, sy := float64(img.Rect.Dx())/size.X.Dots(dpi), float64(img.Rect.Dy())/size.Y.Dots(dpi)
	for i, q := range s.XYs {
		st := styleOf(s.Scatter, i)
		pt := vg.Point{X: trX(q.X), Y: trY(q.Y)}
		if _, circle := st.Shape.(draw.CircleGlyph); !circle {
			c.DrawGlyph(st, pt)
			continue
		}
		if c.Contains(pt) { // as the canvas draws glyphs
			disc(img, (pt.X-area.Min.X).Dots(dpi)*sx, (area.Max.Y-pt.Y).Dots(dpi)*sy, st.Radius.Dots(dpi)*sx, st.Color)
		}
	}
	c.DrawImage(area, img)
}

// disc draws a disc of radius r pixels centred at (cx, cy) (pixel x
// spans x to x+1) over img, each pixel covered by the share of it within
// the radius, approximated by the distance of its centre.
func disc(img *image.RGBA, cx, cy, r float64, col color.Color) {
	cr, cg, cb, ca := col.RGBA()
	src := [4]float64{float64(cr >> 8), float64(cg >> 8), float64(cb >> 8), float64(ca >> 8)}
	b := img.Rect
	for y := max(b.Min.Y, int(math.Floor(cy-r-0.5))); y < min(b.Max.Y, int(math.Ceil(cy+r+0.5))); y++ {
		for x := max(b.Min.X, int(math.Floor(cx-r-0.5))); x < min(b.Max.X, int(math.Ceil(cx+r+0.5))); x++ {
			dx, dy := float64(x)+0.5-cx, float64(y)+0.5-cy
			a := min(1, r+0.5-math.Sqrt(dx*dx+dy*dy))
			if a <= 0 {
				continue
			}
			px := img.Pix[img.PixOffset(x, y):][:4]
			keep := 1 - a*src[3]/255 // premultiplied: source over
			for k := range px {
				px[k] = uint8(a*src[k] + keep*float64(px[k]) + 0.5)
			}
		}
	}
}

// upscale is src drawn on w x h pixels, each the colour of the pixel of
// src it falls in; src itself if it has as many pixels or more.
func upscale(src image.Image, w, h int) image.Image {
	b := src.Bounds()
	if w <= b.Dx() || h <= b.Dy() {
		return src
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.NearestNeighbor.Scale(dst, dst.Bounds(), src, b, xdraw.Src, nil)
	return dst
}

// newHeat draws h as a heat map whose empty cells stay white:
// the cells of grid (row-major, NaN when empty), or h's non-zero bins.
func newHeat(h *hbook.H2D, grid []float64, pal palette.Palette) *hplot.H2D {
	hm := hplot.NewH2D(h, pal)
	nx, ny := hm.HeatMap.GridXYZ.Dims()
	if grid == nil {
		grid = make([]float64, nx*ny)
		for r := range ny {
			for c := range nx {
				if v := hm.HeatMap.GridXYZ.Z(c, r); v != 0 {
					grid[r*nx+c] = v
				} else {
					grid[r*nx+c] = math.NaN()
				}
			}
		}
	}
	hm.HeatMap.GridXYZ = nanGrid{hm.HeatMap.GridXYZ, grid, nx}
	hm.HeatMap.NaN = color.White
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range grid {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi = lo + 1
	}
	hm.HeatMap.Min, hm.HeatMap.Max = lo, hi
	return hm
}

// onWhite is a sequential palette for the maps whose empty pixels are
// white, with a colour bar to fit a figure of the given height:
// Kindlmann's, black to pale yellow-green, without its last fifth, which
// fades into white (the busiest pixel would vanish into the background).
func onWhite(height vg.Length) palette.Palette {
	n := legendColours(height)
	all := moreland.Kindlmann().Palette(n + n/4).Colors()
	return fixedPalette(all[:n])
}

// legendColours is how many colours a palette may have for its colour
// bar, a row each, to fit a figure of the given height: with more, hplot
// cuts the bar and the lowest value's label off.
func legendColours(height vg.Length) int {
	return min(32, max(8, int(height/(4*vg.Millimeter))))
}

// fixedPalette is a palette of given colours.
type fixedPalette []color.Color

func (p fixedPalette) Colors() []color.Color { return p }

// ClusterHits draws the pixels of one cluster coloured by ToT (summed
// per pixel) or by ToA (the earliest per pixel, ns after the cluster's
// first hit); empty pixels stay white.
func ClusterHits(w io.Writer, hits *pixel.Hits, byToA bool, title, format string) error {
	if hits.Len() == 0 {
		return fmt.Errorf("the cluster has no hits")
	}
	nx, ny, _, _ := clusterBox(hits, 2)
	dw, dh := mapArea(nx, ny)
	p, hm := clusterPanel(hits, byToA, 2, title, onWhite(dh))
	what := "ToT (25 ns)"
	if byToA {
		what = "ToA - first (ns)"
	}
	return writeMap(w, p, colourBar(p, hm.HeatMap, false, what), dw, dh, format)
}

// clusterBox is the box of pixels a figure of the cluster's hits shows:
// nx by ny from (x0, y0), a pixel of margin around the hits, and more on
// the shorter side if the longer is over elongation times it (a track
// in its own box would be a line).
func clusterBox(hits *pixel.Hits, elongation float64) (nx, ny int, x0, y0 float64) {
	xmin, xmax := slices.Min(hits.X), slices.Max(hits.X)
	ymin, ymax := slices.Min(hits.Y), slices.Max(hits.Y)
	nx, ny = int(xmax-xmin)+3, int(ymax-ymin)+3
	x0, y0 = float64(xmin)-1, float64(ymin)-1
	if least := int(math.Ceil(float64(ny) / elongation)); nx < least {
		x0 -= float64((least - nx) / 2)
		nx = least
	}
	if least := int(math.Ceil(float64(nx) / elongation)); ny < least {
		y0 -= float64((least - ny) / 2)
		ny = least
	}
	return nx, ny, x0, y0
}

// clusterPanel is the plot of the cluster's pixels in clusterBox(hits,
// elongation), without a colour bar.
func clusterPanel(hits *pixel.Hits, byToA bool, elongation float64, title string, pal palette.Palette) (*hplot.Plot, *hplot.H2D) {
	nx, ny, x0, y0 := clusterBox(hits, elongation)
	t0 := slices.Min(hits.ToA)
	grid := make([]float64, nx*ny)
	for i := range grid {
		grid[i] = math.NaN()
	}
	for i := range hits.Len() {
		k := (int(hits.Y[i])-int(y0))*nx + int(hits.X[i]) - int(x0)
		switch {
		case byToA && math.IsNaN(grid[k]):
			grid[k] = (hits.ToA[i] - t0).Ns()
		case byToA:
			grid[k] = math.Min(grid[k], (hits.ToA[i] - t0).Ns())
		case math.IsNaN(grid[k]):
			grid[k] = float64(hits.ToT[i])
		default:
			grid[k] += float64(hits.ToT[i])
		}
	}
	// Pixel x spans x-0.5 to x+0.5 (see sensorBins).
	h := hbook.NewH2D(nx, x0-0.5, x0-0.5+float64(nx), ny, y0-0.5, y0-0.5+float64(ny))
	for k, v := range grid {
		if !math.IsNaN(v) {
			h.Fill(x0+float64(k%nx), y0+float64(k/nx), v)
		}
	}
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "x (pixel)"
	p.Y.Label.Text = "y (pixel)"
	p.X.Tick.Marker, p.Y.Tick.Marker = pixelTicks{}, pixelTicks{}
	hm := newHeat(h, grid, pal)
	p.Add(hm)
	return p, hm
}

// examplesPerClass is how many clusters of each class ClassExamples
// draws.
const examplesPerClass = 4

// ClassExamples draws, for every class present, clusters of that class
// at the quartiles of its pixel counts (the smallest left, the largest
// right), their pixels coloured by ToT; c must carry its morphology and
// its members.
func ClassExamples(w io.Writer, c *pixel.Clusters, format string) error {
	if !c.HasShapes() || !c.HasMembers() {
		return fmt.Errorf("example clusters need the clusters' classes and hits (cluster --shapes, and a .root file or plot --hits)")
	}
	byClass := make([][]int, len(analysis.Classes))
	for i, k := range c.Class {
		if int(k) < len(byClass) {
			byClass[k] = append(byClass[k], i)
		}
	}
	var rows [][]int
	for _, idx := range byClass {
		if len(idx) == 0 {
			continue
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(c.Pixels[a], c.Pixels[b]) })
		var row []int
		for q := range examplesPerClass {
			i := idx[q*(len(idx)-1)/(examplesPerClass-1)]
			if len(row) == 0 || row[len(row)-1] != i {
				row = append(row, i)
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return fmt.Errorf("no clusters to draw")
	}
	tp := hplot.NewTiledPlot(draw.Tiles{Rows: len(rows), Cols: examplesPerClass, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4})
	clear(tp.Plots) // a class with fewer examples leaves its tiles empty
	for r, row := range rows {
		for col, i := range row {
			var hits pixel.Hits
			hits.AppendRange(&c.Members, c.Start[i], c.Start[i+1])
			title := fmt.Sprintf("%v, %d px (id %d)", analysis.Class(c.Class[i]), c.Pixels[i], c.ID[i])
			p, _ := clusterPanel(&hits, false, 1, title, onWhite(Width)) // square tiles
			p.X.Label.Text, p.Y.Label.Text = "", ""
			tp.Plots[r*examplesPerClass+col] = p
		}
	}
	width := 2 * Width
	wt, err := hplot.WriterTo(tp, width, width*vg.Length(len(rows))/examplesPerClass, formatOr(format))
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}

// nanGrid is the histogram's grid with empty pixels as NaN.
type nanGrid struct {
	plotter.GridXYZ
	values []float64
	nx     int
}

func (g nanGrid) Z(c, r int) float64 { return g.values[r*g.nx+c] }

// Image draws a J-PET image (z across, y up, in metres when the pixel
// size is known) with a colour bar.
func Image(w io.Writer, img jpet.Image, title, format string) error {
	if len(img.Values) != img.NZ*img.NY || len(img.Values) == 0 {
		return fmt.Errorf("image of %d values is not %d x %d", len(img.Values), img.NZ, img.NY)
	}
	px, unit := img.Pixel, "m"
	if px <= 0 {
		px, unit = 1, "pixel"
	}
	zh, yh := float64(img.NZ)*px/2, float64(img.NY)*px/2
	h := hbook.NewH2D(img.NZ, -zh, zh, img.NY, -yh, yh)
	for r := range img.NY {
		for c := range img.NZ {
			// Row 0 is +y.
			h.Fill(-zh+(float64(c)+0.5)*px, yh-(float64(r)+0.5)*px, img.Values[r*img.NZ+c])
		}
	}
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "z (" + unit + ")"
	p.Y.Label.Text = "y (" + unit + ")"
	dw, dh := mapArea(img.NZ, img.NY)
	hm := hplot.NewH2D(h, moreland.BlackBody().Palette(legendColours(dh)))
	if hm.HeatMap.Min > 0 {
		hm.HeatMap.Min = 0 // activity: the scale starts at none
	}
	p.Add(sharp{hm.HeatMap})
	return writeMap(w, p, colourBar(p, hm.HeatMap, false, "activity (arbitrary units)"), dw, dh, format)
}

// FormatOf returns the format of a figure file from its extension: png or
// svg.
func FormatOf(name string) (string, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(name)), ".")
	if format != "png" && format != "svg" {
		return "", fmt.Errorf("%s: want a .png or .svg file", name)
	}
	return format, nil
}

// TimeWalk draws a time-walk fit: the measured delay of each ToT with its
// error, and the fitted hyperbola.
func TimeWalk(w io.Writer, f analysis.WalkFit, format string) error {
	if len(f.Table) == 0 {
		return fmt.Errorf("plot: no measured delays to draw")
	}
	pts := make(plotter.XYs, len(f.Table))
	errs := make(plotter.YErrors, len(f.Table))
	for i, q := range f.Table {
		pts[i] = plotter.XY{X: float64(q.ToT), Y: q.Ns}
		errs[i].Low, errs[i].High = q.Err, q.Err
	}
	p := newPlot()
	hw := f.Hyperbola
	p.Title.Text = fmt.Sprintf("time walk a/(ToT-b)+c: a = %.4g ± %.2g ns, b = %.4g ± %.2g", hw.A, hw.AErr, hw.B, hw.BErr)
	p.X.Label.Text, p.Y.Label.Text = "ToT (25 ns ticks)", "delay (ns)"
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	s.GlyphStyle.Radius = vg.Points(1.5)
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	curve := plotter.NewFunction(func(x float64) float64 { return hw.A/(x-hw.B) + hw.C })
	curve.XMin, curve.XMax = max(0, math.Floor(hw.B)+1), float64(f.Table[len(f.Table)-1].ToT)+1
	curve.Samples = 1000
	curve.Color = color.RGBA{R: 200, A: 255}
	curve.Width = vg.Points(1)
	p.Add(bars, s, curve)
	p.Legend.Add("measured", s)
	p.Legend.Add("fit", curve)
	p.Legend.Top = true
	p.X.Min, p.X.Max = 0, float64(f.Table[len(f.Table)-1].ToT)+1
	return writeFigure(w, p, nil, Width, Width*3/4, format)
}
