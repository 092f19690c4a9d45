package plot

import (
	"bytes"
	"cmp"
	"fmt"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/jpet"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// checkPNG decodes the picture and checks its size.
func checkPNG(t *testing.T, name string, draw func(io.Writer) error, w, h int) {
	t.Helper()
	var buf bytes.Buffer
	if err := draw(&buf); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s: image %v, want %dx%d", name, b, w, h)
	}
}

func TestClusterPlots(t *testing.T) {
	for _, calibrated := range []bool{false, true} {
		c := fixture.Concat(fixture.Clusters(t, calibrated))
		// Histograms 16 x 12 cm at 96 dpi; maps with a data area of square
		// pixels, 12 cm along its longer side, or a dot a pixel.
		checkPNG(t, "size", func(w io.Writer) error { return ClusterSize(w, c, "png") }, 605, 454)
		checkPNG(t, "spectrum", func(w io.Writer) error { return ClusterSpectrum(w, c, "png") }, 605, 454)
		checkPNG(t, "time", func(w io.Writer) error { return ClusterTime(w, c, "png") }, 605, 454)
		checkPNG(t, "map", func(w io.Writer) error { return ClusterMap(w, c, 256, 256, "png") }, 684, 531)
		checkPNG(t, "map of a row of chips", func(w io.Writer) error { return ClusterMap(w, c, 1027, 256, "png") }, 1262, 335)
		one := &pixel.Hits{}
		one.AppendRange(&c.Members, c.Start[3], c.Start[4])
		for _, tc := range []struct {
			byToA bool
			width int // the colour bars' labels differ
		}{{false, 446}, {true, 464}} {
			checkPNG(t, "cluster", func(w io.Writer) error { return ClusterHits(w, one, tc.byToA, "one", "png") }, tc.width, 524)
		}
	}
	// Small sizes get one bin per size; SVG works; empty input is an error.
	small := fixture.Two(t, false)
	checkPNG(t, "small sizes", func(w io.Writer) error { return ClusterSize(w, small, "png") }, 605, 454)
	var buf bytes.Buffer
	if err := ClusterMap(&buf, small, 256, 256, "svg"); err != nil || !strings.HasPrefix(buf.String(), "<?xml") {
		t.Fatalf("svg: %v", err)
	}
	// Counts on a linear scale, unless a hot pixel's span two decades.
	for _, tc := range []struct {
		hot   int
		title string
	}{{99, ">cluster centroids per pixel (100 clusters)<"}, {100, ">cluster centroids per pixel, log scale (101 clusters)<"}} {
		var h pixel.Hits
		h.Append(20, 20, 0, 5)
		for i := range tc.hot {
			h.Append(10, 10, pixel.Time(i+1)*pixel.Microsecond, 5)
		}
		cl, _ := pixel.NewClusterer(pixel.DefaultConfig())
		hot := &pixel.Clusters{}
		hot.Reset()
		cl.AddTo(hot, &h)
		cl.FlushTo(hot)
		buf.Reset()
		if err := ClusterMap(&buf, hot, 256, 256, "svg"); err != nil || !strings.Contains(buf.String(), tc.title) {
			t.Fatalf("%d clusters on a pixel: %v, no title %q", tc.hot, err, tc.title)
		}
	}
	empty := &pixel.Clusters{}
	if err := ClusterSize(&buf, empty, "png"); err == nil {
		t.Fatal("empty clusters plotted")
	}
}

// TestScaleLabels: colour bars read 180, not hplot's 1.8e+02, and a log
// map's bar the counts.
func TestScaleLabels(t *testing.T) {
	for _, tc := range []struct {
		v     float64
		log10 bool
		want  string
	}{
		{184.27, false, "184"}, {0, false, "0"}, {4.65, false, "4.65"}, {2.5, false, "2.5"}, {0.012345, false, "0.0123"},
		{-3.14159, false, "-3.14"}, {1.5e7, false, "1.5e+07"}, {2e-5, false, "2e-05"}, {99.96, false, "100"},
		{0, true, "1"}, {math.Log10(45123), true, "45123"}, {0.5, true, "3.16"},
	} {
		if got := scaleLabel(tc.v, tc.log10); got != tc.want {
			t.Errorf("scaleLabel(%v, %v) = %q, want %q", tc.v, tc.log10, got, tc.want)
		}
	}
	img := jpet.Image{Values: []float64{0, 60, 120, 184.27}, NZ: 2, NY: 2, Pixel: 0.004}
	var buf bytes.Buffer
	if err := Image(&buf, img, "bar", "svg"); err != nil || !strings.Contains(buf.String(), ">184<") || strings.Contains(buf.String(), "e+02") {
		t.Fatalf("colour bar of an image up to 184.27: %v", err)
	}
}

func TestImagePlot(t *testing.T) {
	img := jpet.Image{Values: make([]float64, 75*63), NZ: 75, NY: 63, Pixel: 0.004}
	for i := range img.Values {
		img.Values[i] = float64(i % 75)
	}
	// The data area 12 cm wide, 63/75 of that high.
	checkPNG(t, "image", func(w io.Writer) error { return Image(w, img, "test", "png") }, 738, 449)
	if err := Image(io.Discard, jpet.Image{NZ: 2, NY: 2}, "", "png"); err == nil {
		t.Fatal("image without values plotted")
	}
}

func TestHitMapPlot(t *testing.T) {
	counts, _ := pixel.NewHitCounts(256, 256)
	var h pixel.Hits
	for i := range 5000 {
		h.Append(uint16(i*7%256), uint16(i*13%256), pixel.Time(i), 1)
	}
	for range 1000 {
		h.Append(5, 6, 0, 1)
	}
	counts.Add(&h)
	hot, _ := counts.Hot(20, 100)
	if len(hot) != 1 {
		t.Fatalf("hot pixels %v", hot)
	}
	checkPNG(t, "hit map", func(w io.Writer) error { return HitMap(w, counts, hot, "hits", "png") }, 654, 531)
	wide, _ := pixel.NewHitCounts(1027, 256)
	wide.Add(&h)
	// A dot per pixel: wider than the sensor, the colour bar and margins.
	checkPNG(t, "row of chips", func(w io.Writer) error { return HitMap(w, wide, nil, "hits", "png") }, 1231, 335)
	empty, _ := pixel.NewHitCounts(16, 16)
	if err := HitMap(io.Discard, empty, nil, "none", "png"); err == nil || !strings.Contains(err.Error(), "no hits") {
		t.Fatalf("empty hit map: %v", err)
	}
}

// TestDecadeTicks: a log10 axis is labelled with the sizes at the
// decades, with unlabelled ticks at 2 to 9 times them, inside the range.
func TestDecadeTicks(t *testing.T) {
	ticks := decadeTicks{}.Ticks(0, math.Log10(250))
	var got []string
	for _, tk := range ticks {
		got = append(got, fmt.Sprintf("%.4f:%s", tk.Value, tk.Label))
	}
	want := []string{"0.0000:1", "0.3010:", "0.4771:", "0.6021:", "0.6990:", "0.7782:", "0.8451:", "0.9031:", "0.9542:",
		"1.0000:10", "1.3010:", "1.4771:", "1.6021:", "1.6990:", "1.7782:", "1.8451:", "1.9031:", "1.9542:",
		"2.0000:100", "2.3010:"}
	if !slices.Equal(got, want) {
		t.Fatalf("ticks %q, want %q", got, want)
	}
}

// TestPixelTicks: a cluster a few pixels wide has a labelled tick on every
// pixel, whole numbers only; a wide one has round ticks, whole numbers too.
func TestPixelTicks(t *testing.T) {
	label := func(lo, hi float64) []string {
		var got []string
		for _, tk := range (pixelTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
				if tk.Value != math.Trunc(tk.Value) {
					t.Fatalf("[%v, %v]: labelled tick at %v", lo, hi, tk.Value)
				}
			}
		}
		return got
	}
	if got, want := label(167.5, 172.5), []string{"168", "169", "170", "171", "172"}; !slices.Equal(got, want) {
		t.Fatalf("ticks %q, want %q", got, want)
	}
	if got := label(-0.5, 255.5); len(got) < 4 || len(got) > 8 || got[0] != "0" {
		t.Fatalf("sensor-wide ticks %q", got)
	}
}

// TestPalettesFit: the maps on white keep their busiest pixel visible
// (the palette stops short of white), and every colour bar fits its
// figure, the lowest value's label included.
func TestPalettesFit(t *testing.T) {
	cols := onWhite(Width).Colors()
	if len(cols) != 32 {
		t.Fatalf("%d colours", len(cols))
	}
	for i, c := range cols {
		r, g, b, _ := c.RGBA()
		if r+g+b > 3*0xffff*85/100 {
			t.Fatalf("colour %d of %d, %v, is close to white", i, len(cols), c)
		}
	}
	for _, tc := range []struct {
		height vg.Length
		want   int
	}{{Width, 32}, {Width * 0.4, 16}, {2 * vg.Centimeter, 8}} {
		if got := legendColours(tc.height); got != tc.want {
			t.Errorf("height %v: %d colours, want %d", tc.height, got, tc.want)
		}
	}
}

// TestSquareCells: the cells of an image are drawn square, whatever
// its shape (the ones too flat to be seen excepted), its title and colour
// bar: in an image of one cell of 1 among cells of 0 (black) and one of
// 2 (white), the lit cell, the commonest colour but black and white, is
// as many dots across as up.
func TestSquareCells(t *testing.T) {
	for _, tc := range []struct{ nz, ny int }{{3, 1}, {1, 3}, {5, 3}, {3, 5}, {12, 2}} {
		img := jpet.Image{Values: make([]float64, tc.nz*tc.ny), NZ: tc.nz, NY: tc.ny, Pixel: 0.004}
		img.Values[0] = 2
		img.Values[tc.ny/2*tc.nz+tc.nz/2] = 1
		var buf bytes.Buffer
		if err := Image(&buf, img, "a title wide enough to matter", "png"); err != nil {
			t.Fatal(err)
		}
		pic, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		b := pic.Bounds()
		seen := map[color.RGBA]int{}
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if c := color.RGBAModel.Convert(pic.At(x, y)).(color.RGBA); c != (color.RGBA{A: 255}) && c != (color.RGBA{255, 255, 255, 255}) {
					seen[c]++
				}
			}
		}
		var lit color.RGBA
		for c, n := range seen {
			if n > seen[lit] {
				lit = c
			}
		}
		// The longest runs of the lit colour across and up are the cell's
		// (the colour bar's swatch of it is smaller).
		is := func(x, y int) bool { return color.RGBAModel.Convert(pic.At(x, y)) == lit }
		across, up := 0, 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			across = max(across, longestRun(b.Dx(), func(i int) bool { return is(b.Min.X+i, y) }))
		}
		for x := b.Min.X; x < b.Max.X; x++ {
			up = max(up, longestRun(b.Dy(), func(i int) bool { return is(x, b.Min.Y+i) }))
		}
		if across < 20 || abs(across-up) > 3 { // the edges blend a dot or so
			t.Errorf("%dx%d image: the cell is %d dots across and %d up", tc.nz, tc.ny, across, up)
		}
	}
}

// TestClusterBox: a cluster's box holds its hits with a pixel of margin,
// widened about them where it is more than the elongation allowed times
// longer than wide.
func TestClusterBox(t *testing.T) {
	var track pixel.Hits
	for y := range 20 {
		track.Append(50, uint16(100+y), 0, 1)
	}
	for _, tc := range []struct {
		elongation float64
		nx, ny     int
		x0, y0     float64
	}{{2, 11, 22, 45, 99}, {1, 22, 22, 40, 99}, {30, 3, 22, 49, 99}} {
		nx, ny, x0, y0 := clusterBox(&track, tc.elongation)
		if nx != tc.nx || ny != tc.ny || x0 != tc.x0 || y0 != tc.y0 {
			t.Errorf("elongation %v: %dx%d from (%v, %v), want %dx%d from (%v, %v)", tc.elongation, nx, ny, x0, y0, tc.nx, tc.ny, tc.x0, tc.y0)
		}
	}
	var flat pixel.Hits
	flat.Append(0, 0, 0, 1)
	flat.Append(6, 0, 0, 1) // 9 x 3 with the margin
	if nx, ny, x0, y0 := clusterBox(&flat, 2); nx != 9 || ny != 5 || x0 != -1 || y0 != -2 {
		t.Errorf("flat cluster: %dx%d from (%v, %v)", nx, ny, x0, y0)
	}
}

func longestRun(n int, in func(int) bool) int {
	best, run := 0, 0
	for i := range n {
		if in(i) {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

func abs(v int) int { return max(v, -v) }

// TestClassExamples: a figure of example clusters for the classes there
// are, four or fewer each; none without classes or hits.
func TestClassExamples(t *testing.T) {
	c := fixture.Concat(fixture.Clusters(t, false))
	var s analysis.Shaper
	if err := s.Describe(c, analysis.DefaultRules); err != nil {
		t.Fatal(err)
	}
	classes := map[uint8]bool{}
	for _, k := range c.Class {
		classes[k] = true
	}
	if len(classes) < 3 {
		t.Fatalf("only %d classes in the fixture", len(classes))
	}
	// 32 cm wide, 8 cm a row at 96 dpi.
	checkPNG(t, "examples", func(w io.Writer) error { return ClassExamples(w, c, "png") }, 1209, int(math.Round(1209*float64(len(classes))/4)))
	var buf bytes.Buffer
	if err := ClassExamples(&buf, c, "svg"); err != nil || strings.Count(buf.String(), " px (id ") < len(classes) {
		t.Fatalf("svg: %v", err)
	}
	noHits := *c
	noHits.Start = nil
	if err := ClassExamples(&buf, &noHits, "png"); err == nil {
		t.Error("examples drawn without hits")
	}
}

// TestRankSelect: the value of rank k is the sorted slice's k-th, for
// values with many ties, NaNs and signed zeros, at every k of some
// small slices and at the ends, a random k and the 99.9th percentile of
// the others, whether it holds few values (and narrows them down over
// many passes) or many.
func TestRankSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		n := 1 + r.IntN(60)
		if trial%10 == 0 {
			n = 1000 + r.IntN(100000)
		}
		v := make([]float64, n)
		kinds := 1 + r.IntN(4)
		for i := range v {
			switch r.IntN(kinds) {
			case 0:
				v[i] = float64(r.IntN(1 + n/10)) // ties
			case 1:
				v[i] = r.NormFloat64()
			case 2:
				v[i] = []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1)}[r.IntN(4)]
			default:
				v[i] = float64(i) // sorted runs
			}
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		ks := []int{0, n - 1, r.IntN(n), int(0.999 * float64(n-1))}
		if n <= 60 && trial%16 == 1 { // every rank, now and then
			ks = ks[:0]
			for k := range n {
				ks = append(ks, k)
			}
		}
		for _, k := range ks {
			most := int64(1 + r.IntN(3*n))
			rs := newRankSelect(most)
			for _, x := range v {
				rs.add(x)
			}
			rs.k = int64(k)
			passes := 1
			for !rs.pass() {
				for _, x := range v {
					rs.add(x)
				}
				passes++
			}
			if cmp.Compare(rs.value, sorted[k]) != 0 || passes > 5 {
				t.Fatalf("trial %d: the %d-th of %d is %v after %d passes holding %d, want %v", trial, k, n, rs.value, passes, most, sorted[k])
			}
		}
	}
}

// allBoxes is a sharp heat map with the heat map's own glyph boxes, a
// box a cell.
type allBoxes struct{ sharp }

func (h allBoxes) GlyphBoxes(p *gplot.Plot) []gplot.GlyphBox { return h.HeatMap.GlyphBoxes(p) }

// TestCornerGlyphBoxes: a heat map padded by its corner cells' glyph
// boxes is drawn to the same bytes as by all of them.
func TestCornerGlyphBoxes(t *testing.T) {
	for _, tc := range []struct{ nx, ny int }{{1, 1}, {1, 4}, {5, 1}, {3, 5}, {300, 70}} {
		g := countGrid{z: make([]float64, tc.nx*tc.ny), nx: tc.nx, ny: tc.ny, step: 0.25}
		for k := range g.z {
			g.z[k] = float64(k % 7)
		}
		var figs [2][]byte
		for i, wrap := range []func(*plotter.HeatMap) gplot.Plotter{
			func(hm *plotter.HeatMap) gplot.Plotter { return sharp{hm} },
			func(hm *plotter.HeatMap) gplot.Plotter { return allBoxes{sharp{hm}} },
		} {
			p := newPlot()
			dw, dh := mapArea(tc.nx, tc.ny)
			hm := plotter.NewHeatMap(g, onWhite(dh))
			hm.Min, hm.Max = 0, 6
			p.Add(wrap(hm))
			var buf bytes.Buffer
			if err := writeMap(&buf, p, colourBar(p, hm, false, "counts"), dw, dh, "png"); err != nil {
				t.Fatal(err)
			}
			figs[i] = buf.Bytes()
		}
		if len(figs[0]) == 0 || !bytes.Equal(figs[0], figs[1]) {
			t.Errorf("%dx%d grid: the corners' glyph boxes draw another figure", tc.nx, tc.ny)
		}
	}
}

// TestOuterScatterBoxes: a scatter padded by its outermost points' glyph
// boxes, of glyphs of several sizes, is drawn to the same bytes as by all
// of them; the outermost point of a small glyph may be passed over by a
// larger glyph's box.
func TestOuterScatterBoxes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 3000} {
		xy := make(plotter.XYs, n)
		for i := range xy {
			xy[i].X, xy[i].Y = r.NormFloat64(), 100*r.Float64()
		}
		radius := func(i int) vg.Length { return vg.Length(1 + 9*float64(i%3)) }
		var figs [2][]byte
		for k := range figs {
			s, err := plotter.NewScatter(xy)
			if err != nil {
				t.Fatal(err)
			}
			s.GlyphStyleFunc = func(i int) draw.GlyphStyle {
				return draw.GlyphStyle{Color: color.Black, Radius: radius(i), Shape: draw.CircleGlyph{}}
			}
			p := newPlot()
			if k == 0 {
				p.Add(newOuterScatter(s))
			} else {
				p.Add(s)
			}
			var buf bytes.Buffer
			if err := writeFigure(&buf, p, nil, 8*vg.Centimeter, 6*vg.Centimeter, "png"); err != nil {
				t.Fatal(err)
			}
			figs[k] = buf.Bytes()
		}
		if len(figs[0]) == 0 || !bytes.Equal(figs[0], figs[1]) {
			t.Errorf("%d points: the outermost points' glyph boxes draw another figure", n)
		}
	}
}

// TestDiscs: circles drawn as one image look as the canvas draws them:
// the same pixels covered, the same colours, to within the smoothing of
// their edges; a disc's centre has its colour exactly.
func TestDiscs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	xy := make(plotter.XYs, 3000)
	for i := range xy {
		xy[i].X, xy[i].Y = r.NormFloat64(), r.NormFloat64()
	}
	colours := []color.RGBA{{200, 30, 30, 255}, {30, 160, 60, 255}, {170, 170, 170, 255}}
	style := func(i int) draw.GlyphStyle {
		return draw.GlyphStyle{Color: colours[i%3], Radius: vg.Points([]float64{0.6, 1.5, 3}[i%3]), Shape: draw.CircleGlyph{}}
	}
	var pics [2]*image.RGBA
	for k := range pics {
		s, err := plotter.NewScatter(xy)
		if err != nil {
			t.Fatal(err)
		}
		s.GlyphStyleFunc = style
		p := newPlot()
		if k == 0 {
			p.Add(discs{newOuterScatter(s)})
		} else {
			p.Add(s)
		}
		var buf bytes.Buffer
		if err := writeFigure(&buf, p, nil, 12*vg.Centimeter, 12*vg.Centimeter, "png"); err != nil {
			t.Fatal(err)
		}
		pic, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		pics[k] = image.NewRGBA(pic.Bounds())
		stddraw.Draw(pics[k], pic.Bounds(), pic, pic.Bounds().Min, stddraw.Src)
	}
	a, b := pics[0], pics[1]
	if a.Bounds() != b.Bounds() {
		t.Fatalf("sizes %v and %v", a.Bounds(), b.Bounds())
	}
	var sum, far int
	for i := range a.Pix {
		d := abs(int(a.Pix[i]) - int(b.Pix[i]))
		sum += d
		if d > 128 {
			far++
		}
	}
	// A pixel's shift makes it 2.0, radii 30 % too large 4.8.
	if mean := float64(sum) / float64(len(a.Pix)); mean > 1 || far > 0 {
		t.Errorf("mean difference %.3f, %d of %d bytes differ by more than half", mean, far, len(a.Pix))
	}
	// One disc alone: its colour at the centre, its area pi r^2.
	img := image.NewRGBA(image.Rect(0, 0, 12, 12))
	disc(img, 5.5, 5.5, 3, colours[0])
	if got := img.RGBAAt(5, 5); got != colours[0] || img.RGBAAt(0, 0) != (color.RGBA{}) {
		t.Errorf("centre %v, corner %v", got, img.RGBAAt(0, 0))
	}
	var area float64
	for i := 3; i < len(img.Pix); i += 4 {
		area += float64(img.Pix[i]) / 255
	}
	if math.Abs(area-9*math.Pi) > 0.03*9*math.Pi {
		t.Errorf("a disc of radius 3 covers %.2f pixels, want %.2f", area, 9*math.Pi)
	}
}

// TestClusterFiguresInBatches: the figures of clusters read a batch at a
// time, in passes, are those of the clusters in memory, byte for byte:
// sizes, spectra (energies and ToT sums, whose upper edge is a quantile
// found over the passes), map, time, classes and times of flight; the
// passes are three.
func TestClusterFiguresInBatches(t *testing.T) {
	for _, calibrated := range []bool{false, true} {
		batches := fixture.Clusters(t, calibrated)
		var shaper analysis.Shaper
		var tof analysis.TOF
		t0 := batches[0].FirstToA[0]
		for k := range 200 {
			tof.AddReferences([]pixel.Time{t0 + pixel.Time(k)*pixel.Millisecond/2 + 7})
		}
		for _, b := range batches {
			if err := shaper.Describe(b, analysis.DefaultRules); err != nil {
				t.Fatal(err)
			}
			tof.Assign(b)
			b.Members, b.Start = pixel.Hits{}, nil // as a file without the hits gives them
		}
		all := fixture.Concat(batches)
		dir := t.TempDir()
		want, err := WriteClusterFigures(filepath.Join(dir, "mem"), all, 256, 256, 12.5, "png")
		if err != nil {
			t.Fatal(err)
		}
		passes := 0
		scan := func(fn func(*pixel.Clusters) error) error {
			passes++
			for _, b := range batches {
				if err := fn(b); err != nil {
					return err
				}
			}
			return nil
		}
		o, err := NewOverview(scan, 256, 256, 12.5)
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.Write(filepath.Join(dir, "scan"), "png")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 8 || len(got) != len(want) || passes != 3 {
			t.Fatalf("figures %v from %d passes, in memory %v", got, passes, want)
		}
		for i := range got {
			a, _ := os.ReadFile(want[i])
			b, _ := os.ReadFile(got[i])
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("calibrated %v: %s differs from %s", calibrated, got[i], want[i])
			}
		}
	}
}
