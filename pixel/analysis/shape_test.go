package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// batch makes a batch of clusters with the given pixels as members.
func batch(clusters ...[][2]uint16) *pixel.Clusters {
	c := &pixel.Clusters{Start: []int{0}}
	for i, px := range clusters {
		for _, p := range px {
			c.Members.Append(p[0], p[1], pixel.Time(i), 10)
		}
		c.ID = append(c.ID, int64(i))
		c.Start = append(c.Start, c.Members.Len())
		c.Size = append(c.Size, int32(len(px)))
		c.FirstToA, c.LastToA = append(c.FirstToA, pixel.Time(i)), append(c.LastToA, pixel.Time(i))
		c.ToTSum, c.ESum = append(c.ToTSum, int64(10*len(px))), append(c.ESum, 0)
		c.X, c.Y, c.Max = append(c.X, 0), append(c.Y, 0), append(c.Max, 10)
		c.XMin, c.XMax, c.YMin, c.YMax = append(c.XMin, 0), append(c.XMax, 0), append(c.YMin, 0), append(c.YMax, 0)
	}
	return c
}

func rect(x0, y0, w, h uint16) [][2]uint16 {
	var px [][2]uint16
	for x := x0; x < x0+w; x++ {
		for y := y0; y < y0+h; y++ {
			px = append(px, [2]uint16{x, y})
		}
	}
	return px
}

// ring is the border of a square of side n.
func ring(x0, y0, n uint16) [][2]uint16 {
	var px [][2]uint16
	for _, p := range rect(x0, y0, n, n) {
		if p[0] == x0 || p[1] == y0 || p[0] == x0+n-1 || p[1] == y0+n-1 {
			px = append(px, p)
		}
	}
	return px
}

func diagonal(n uint16) [][2]uint16 {
	var px [][2]uint16
	for i := range n {
		px = append(px, [2]uint16{50 + i, 60 + i})
	}
	return px
}

// Shapes worked out by hand.
func TestShapesByHand(t *testing.T) {
	r2 := math.Sqrt2
	cases := []struct {
		name  string
		px    [][2]uint16
		want  Shape
		class Class
	}{
		{"one pixel", [][2]uint16{{7, 9}}, Shape{Pixels: 1, Roundness: 1, Length: 1, Width: 1}, Dot},
		{"one pixel hit twice", [][2]uint16{{7, 9}, {7, 9}}, Shape{Pixels: 1, Roundness: 1, Length: 1, Width: 1}, Dot},
		// var(0..4) = 2: l1 = 2, l2 = 0.
		{"row of 5", rect(10, 20, 5, 1), Shape{Pixels: 5, Roundness: 0, Linearity: 1, Length: 5, Width: 1}, StraightTrack},
		{"column of 4", rect(10, 20, 1, 4), Shape{Pixels: 4, Roundness: 0, Linearity: 1, Length: 4, Width: 1}, Dot},
		// cxx = cyy = cxy = 2: l1 = 4 along (1, 1)/sqrt 2; the ends 4 sqrt 2 apart.
		{"diagonal of 5", diagonal(5), Shape{Pixels: 5, Roundness: 0, Linearity: 1, Length: 4*r2 + 1, Width: 1}, StraightTrack},
		// cxx = cyy = 2/3, cxy = 0: round; the centre is inner.
		{"3x3", rect(0, 0, 3, 3), Shape{Pixels: 9, Inner: 1, Roundness: 1, Length: 3, Width: 3}, SmallBlob},
		{"plus", [][2]uint16{{5, 5}, {4, 5}, {6, 5}, {5, 4}, {5, 6}}, Shape{Pixels: 5, Roundness: 1, Length: 3, Width: 3}, SmallBlob},
		{"5x5", rect(100, 100, 5, 5), Shape{Pixels: 25, Inner: 9, Roundness: 1, Length: 5, Width: 5}, HeavyBlob},
		// cxx = var(0..9) = 8.25, cyy = 0.25.
		{"2x10", rect(30, 30, 10, 2), Shape{Pixels: 20, Roundness: 0.25 / 8.25, Linearity: 8 / 8.5, Length: 10, Width: 2}, StraightTrack},
		// cxx = 8.25, cyy = 2/3; the middle row, x = 1..8, is inner.
		{"3x10", rect(30, 30, 10, 3), Shape{Pixels: 30, Inner: 8, Roundness: (2.0 / 3) / 8.25, Linearity: (8.25 - 2.0/3) / (8.25 + 2.0/3), Length: 10, Width: 3}, HeavyTrack},
		// The border of a 9x9 square: round, thin, 32 pixels.
		{"ring", ring(0, 0, 9), Shape{Pixels: 32, Roundness: 1, Length: 9, Width: 9}, CurlyTrack},
	}
	var s Shaper
	for _, tc := range cases {
		got, err := s.Shapes(batch(tc.px), nil)
		if err != nil {
			t.Fatal(err)
		}
		g := got[0]
		if g.Pixels != tc.want.Pixels || g.Inner != tc.want.Inner || !near(g.Roundness, tc.want.Roundness) ||
			!near(g.Linearity, tc.want.Linearity) || !near(g.Length, tc.want.Length) || !near(g.Width, tc.want.Width) {
			t.Errorf("%s: %+v, want %+v", tc.name, g, tc.want)
		}
		if c := DefaultRules.Classify(g); c != tc.class {
			t.Errorf("%s: class %v, want %v", tc.name, c, tc.class)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

// reference computes a shape another way: two-pass moments, the axis from
// the angle of the covariance, inner pixels by a map.
func reference(px [][2]uint16) Shape {
	set := map[[2]uint16]bool{}
	for _, p := range px {
		set[p] = true
	}
	var mx, my float64
	for p := range set {
		mx += float64(p[0])
		my += float64(p[1])
	}
	n := float64(len(set))
	mx, my = mx/n, my/n
	var cxx, cyy, cxy float64
	var inner int32
	for p := range set {
		dx, dy := float64(p[0])-mx, float64(p[1])-my
		cxx += dx * dx / n
		cyy += dy * dy / n
		cxy += dx * dy / n
		all := p[0] > 0 && p[1] > 0
		for dxi := -1; dxi <= 1 && all; dxi++ {
			for dyi := -1; dyi <= 1; dyi++ {
				if !set[[2]uint16{uint16(int(p[0]) + dxi), uint16(int(p[1]) + dyi)}] {
					all = false
					break
				}
			}
		}
		if all {
			inner++
		}
	}
	theta := 0.5 * math.Atan2(2*cxy, cxx-cyy)
	ux, uy := math.Cos(theta), math.Sin(theta)
	l1 := cxx*ux*ux + 2*cxy*ux*uy + cyy*uy*uy
	l2 := cxx*uy*uy - 2*cxy*ux*uy + cyy*ux*ux
	s := Shape{Pixels: int32(len(set)), Inner: inner, Roundness: 1}
	if l1 > 1e-12 {
		s.Roundness, s.Linearity = math.Max(l2, 0)/l1, (l1-math.Max(l2, 0))/(l1+math.Max(l2, 0))
	}
	lmin, lmax, wmin, wmax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for p := range set {
		x, y := float64(p[0]), float64(p[1])
		a, c := x*ux+y*uy, -x*uy+y*ux
		lmin, lmax, wmin, wmax = min(lmin, a), max(lmax, a), min(wmin, c), max(wmax, c)
	}
	s.Length, s.Width = lmax-lmin+1, wmax-wmin+1
	return s
}

// Random clusters (blobs, walks, lines, repeats) against the reference,
// with the pixels mapped and sorted (the path of very large boxes).
func TestShapesRandom(t *testing.T) {
	for _, grid := range []int{maxGrid, 0} {
		saved := maxGrid
		maxGrid = grid
		shapesRandom(t)
		maxGrid = saved
	}
}

func shapesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s Shaper
	var clusters [][][2]uint16
	for range 2000 {
		n := 1 + r.IntN(60)
		x, y := 1+r.IntN(250), 1+r.IntN(250)
		var px [][2]uint16
		for range n {
			px = append(px, [2]uint16{uint16(x), uint16(y)})
			switch r.IntN(3) {
			case 0: // a walk
				x, y = min(max(x+r.IntN(3)-1, 0), 255), min(max(y+r.IntN(3)-1, 0), 255)
			case 1: // a blob around the start
				x, y = min(max(int(px[0][0])+r.IntN(7)-3, 0), 255), min(max(int(px[0][1])+r.IntN(7)-3, 0), 255)
			}
		}
		clusters = append(clusters, px)
	}
	got, err := s.Shapes(batch(clusters...), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, px := range clusters {
		g, w := got[i], reference(px)
		// Round clusters have no axis: their length and width depend on
		// the axis taken.
		axisFree := w.Roundness > 1-1e-9
		if g.Pixels != w.Pixels || g.Inner != w.Inner || math.Abs(g.Roundness-w.Roundness) > 1e-9 || math.Abs(g.Linearity-w.Linearity) > 1e-9 ||
			!axisFree && (math.Abs(g.Length-w.Length) > 1e-6 || math.Abs(g.Width-w.Width) > 1e-6) {
			t.Fatalf("cluster %d %v: %+v, reference %+v", i, px, g, w)
		}
	}
}

// TestBoxedShapes: every occupancy of a box gives, from the Shaper's
// table, the shape computed from the pixels themselves, to the bit,
// wherever the box lies and in whatever order and repetition the hits
// come.
func TestBoxedShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var s, direct Shaper
	for occupied := 1; occupied < 1<<(boxSide*boxSide); occupied++ {
		x0, y0 := uint16(r.IntN(1000)), uint16(r.IntN(250))
		var xs, ys []uint16
		b := box{xmin: math.MaxUint16, ymin: math.MaxUint16}
		for k := range boxSide * boxSide {
			if occupied&(1<<k) == 0 {
				continue
			}
			x, y := x0+uint16(k%boxSide), y0+uint16(k/boxSide)
			for range 1 + r.IntN(2) {
				xs, ys = append(xs, x), append(ys, y)
			}
			b = box{min(b.xmin, x), max(b.xmax, x), min(b.ymin, y), max(b.ymax, y)}
		}
		r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j], ys[i], ys[j] = xs[j], xs[i], ys[j], ys[i] })
		if got, want := *s.of(xs, ys), direct.shape(xs, ys, b); got != want {
			t.Fatalf("occupancy %016b at (%d, %d): %+v from the table, %+v from the pixels", occupied, x0, y0, got, want)
		}
	}
}

// TestInnerAcrossWords: inner pixels counted a word of the box at a time
// where boxes span several words and the pixels cross their borders:
// full rectangles and dense random fills, at every offset around a
// word's border, against the reference.
func TestInnerAcrossWords(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var s Shaper
	for _, x0 := range []uint16{0, 1, 2, 60, 61, 62, 63, 64, 65, 125, 126, 127, 128} {
		for _, w := range []uint16{3, 4, 61, 62, 63, 64, 65, 66, 127, 128, 129, 130, 200} {
			full := rect(x0, 5, w, 3+uint16(r.IntN(3)))
			var dense [][2]uint16
			for _, p := range rect(x0, 20, w, 5) {
				if r.IntN(10) > 0 {
					dense = append(dense, p)
				}
			}
			for _, px := range [][][2]uint16{full, dense} {
				got, err := s.Shapes(batch(px), nil)
				if err != nil {
					t.Fatal(err)
				}
				if want := reference(px); got[0].Inner != want.Inner || got[0].Pixels != want.Pixels {
					t.Fatalf("x0 %d, width %d: %d inner of %d pixels, reference %d of %d", x0, w, got[0].Inner, got[0].Pixels, want.Inner, want.Pixels)
				}
			}
		}
	}
}

func TestShapesNeedMembers(t *testing.T) {
	var s Shaper
	c := &pixel.Clusters{ID: []int64{0}}
	if _, err := s.Shapes(c, nil); err != pixel.ErrNoMembers {
		t.Errorf("error %v", err)
	}
}

func TestReadRules(t *testing.T) {
	text := "# thresholds\ndot_pixels 2\nround_min 0.6  # rounder blobs\n\nstraight_width 2.5\n"
	want := DefaultRules
	want.DotPixels, want.RoundMin, want.StraightWidth = 2, 0.6, 2.5
	// The second as an editor on Windows saves it: a byte-order mark, CRLF.
	for _, text := range []string{text, "\ufeff" + strings.ReplaceAll(text, "\n", "\r\n")} {
		if r, err := ReadRules(strings.NewReader(text), "rules.txt"); err != nil || r != want {
			t.Errorf("%q: %+v, %v; want %+v", text, r, err, want)
		}
	}
	for text, says := range map[string]string{
		"dot_pixels":          "line 1",
		"dots 4":              `unknown threshold "dots"`,
		"dot_pixels -1":       "not a non-negative number",
		"round_min NaN":       "not a non-negative number",
		"round_min 0.5 extra": "line 1",
		"\nheavy_inner 2.5":   "classes: rules.txt: line 2",
	} {
		if _, err := ReadRules(strings.NewReader(text), "rules.txt"); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want %q", text, err, says)
		}
	}
}

// FuzzReadRules: any text gives thresholds a classification can use
// (finite, not negative) or an error naming the file.
func FuzzReadRules(f *testing.F) {
	f.Add("# thresholds\ndot_pixels 2\nround_min 0.6  # rounder\n\nstraight_width 2.5\n")
	f.Add("\ufeffheavy_inner 3\r\nsmall_blob_pixels 9\r\n")
	f.Add("dot_pixels -1\nround_min NaN\nx 1 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ReadRules(strings.NewReader(text), "rules.txt")
		if err != nil {
			if !strings.Contains(err.Error(), "rules.txt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if r.DotPixels < 0 || r.HeavyInner < 0 || r.SmallBlobPixels < 0 ||
			!(r.RoundMin >= 0 && r.StraightWidth >= 0) || math.IsInf(r.RoundMin, 0) || math.IsInf(r.StraightWidth, 0) {
			t.Fatalf("thresholds %+v", r)
		}
	})
}

func TestParseClass(t *testing.T) {
	for _, c := range Classes {
		if got, err := ParseClass(strings.ToUpper(c.String())); err != nil || got != c {
			t.Errorf("%v: %v, %v", c, got, err)
		}
	}
	if _, err := ParseClass("muon"); err == nil || !strings.Contains(err.Error(), "straight_track") {
		t.Errorf("muon: %v", err)
	}
}

func TestFilter(t *testing.T) {
	c := batch(rect(0, 0, 1, 2), rect(10, 10, 8, 1), rect(30, 30, 5, 5), diagonal(6), [][2]uint16{{90, 90}})
	f := Filter{Rules: DefaultRules}
	f.Keep[StraightTrack] = true
	kept, err := f.Apply(c)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kept.ID, []int64{1, 3}) || !slices.Equal(kept.Start, []int{0, 8, 14}) || kept.Members.Len() != 14 || kept.Members.X[8] != 50 {
		t.Errorf("kept ids %v, starts %v, %d members", kept.ID, kept.Start, kept.Members.Len())
	}
	if f.Dropped[Dot] != 2 || f.Dropped[HeavyBlob] != 1 || f.Dropped[StraightTrack] != 0 {
		t.Errorf("dropped %v", f.Dropped)
	}
	// Nothing kept: an empty batch.
	var none Filter
	if kept, err := none.Apply(c); err != nil || kept.Len() != 0 || kept.HasMembers() != true {
		t.Errorf("none kept: %d clusters, %v", kept.Len(), err)
	}
}

// BenchmarkDescribe: the morphology of simulated clusters (MB/s reads as
// thousands of clusters per ms: Mcluster/s).
func BenchmarkDescribe(b *testing.B) {
	for _, d := range []string{"gamma", "pion45"} {
		b.Run(d, func(b *testing.B) {
			ds, _ := pixelsim.DatasetByName(d)
			var h pixel.Hits
			pixelsim.Generate(pixelsim.Options{Dataset: ds, Hits: 1 << 20, Seed: 1}, func(x *pixel.Hits) error {
				h.AppendRange(x, 0, x.Len())
				return nil
			})
			c, _ := pixel.NewClusterer(pixel.DefaultConfig())
			c.KeepMembers(true)
			cl := &pixel.Clusters{}
			cl.Reset()
			c.AddTo(cl, &h)
			c.FlushTo(cl)
			var s Shaper
			b.SetBytes(int64(cl.Len()))
			for b.Loop() {
				if err := s.Describe(cl, DefaultRules); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
