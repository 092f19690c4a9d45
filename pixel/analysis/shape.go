package analysis

import (
	"math"
	"math/bits"
	"slices"

	"github.com/hitflow/hitflow/pixel"
)

// Shape is the morphology of a cluster, from the pixels it hit (each
// counted once, whatever its hits' energies: the shape of the track).
type Shape struct {
	Pixels int32 // distinct pixels
	Inner  int32 // pixels whose 8 neighbours are all in the cluster
	// From the eigenvalues l1 >= l2 of the covariance of the pixels'
	// positions: Roundness l2/l1 (1 for a disc or a square, 0 for a
	// line), Linearity (l1-l2)/(l1+l2) (1 for a line, 0 for a disc). A
	// single pixel is round: 1 and 0.
	Roundness, Linearity float64
	// The extent of the pixels, in pixels, along the principal axis (the
	// eigenvector of l1) and across it: the distance between the
	// outermost pixel centres plus one pixel.
	Length, Width float64
}

// Shaper computes shapes, reusing its buffers from cluster to cluster.
type Shaper struct {
	keys []uint32 // the cluster's distinct pixels, x<<16 | y
	// The occupancy of the cluster's bounding box with a margin of one
	// pixel, a bit a pixel, row by row from (x0, y0), words a row; zero
	// again after each cluster. A box larger than maxGrid pixels (a long
	// diagonal track on a very large sensor) takes sorted keys and binary
	// searches instead.
	grid    []uint64
	x0, y0  int
	words   int
	rows    int
	useGrid bool
	// The shapes of the clusters that fit a box of boxSide pixels a
	// side, by the occupancy of the box from the cluster's lowest x and y
	// (bit y*boxSide+x), each computed the first time it is seen (its bit
	// in known): most clusters of X-rays and electrons fit one, in a few
	// hundred patterns. They are what shape gives, to the bit: the same
	// pixels about the same origin.
	boxed []Shape
	known []uint64
	last  Shape // of a cluster beyond a box
}

// boxSide is the side of the boxes whose shapes Shaper keeps.
const boxSide = 4

// maxGrid is the largest bounding box, in pixels, that Shaper maps (a
// variable for tests).
var maxGrid = 1 << 22

// Shapes appends the shape of every cluster of c to dst; c must carry its
// members (see pixel.Clusterer.KeepMembers).
func (s *Shaper) Shapes(c *pixel.Clusters, dst []Shape) ([]Shape, error) {
	if !c.HasMembers() {
		return dst, pixel.ErrNoMembers
	}
	m := &c.Members
	for i := range c.Len() {
		dst = append(dst, *s.of(m.X[c.Start[i]:c.Start[i+1]], m.Y[c.Start[i]:c.Start[i+1]]))
	}
	return dst, nil
}

// Describe sets the morphology columns of c (see pixel.Clusters.HasShapes),
// with the classes by r; c must carry its members.
func (s *Shaper) Describe(c *pixel.Clusters, r Rules) error {
	if !c.HasMembers() {
		return pixel.ErrNoMembers
	}
	n := c.Len()
	c.Pixels, c.Inner, c.Class = sized(c.Pixels, n), sized(c.Inner, n), sized(c.Class, n)
	c.Roundness, c.Linearity, c.Length, c.Width = sized(c.Roundness, n), sized(c.Linearity, n), sized(c.Length, n), sized(c.Width, n)
	m := &c.Members
	for i := range n {
		sh := s.of(m.X[c.Start[i]:c.Start[i+1]], m.Y[c.Start[i]:c.Start[i+1]])
		c.Pixels[i], c.Inner[i], c.Class[i] = sh.Pixels, sh.Inner, uint8(r.Classify(*sh))
		c.Roundness[i], c.Linearity[i], c.Length[i], c.Width[i] = sh.Roundness, sh.Linearity, sh.Length, sh.Width
	}
	return nil
}

// sized is s with length n, its storage kept when large enough.
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// onePixel is the shape of a single pixel.
var onePixel = Shape{Pixels: 1, Roundness: 1, Length: 1, Width: 1}

// of is the shape of the pixels (xs[i], ys[i]), repeats allowed, valid
// until the next call: a pointer, as a copy of each of the many shapes
// was a large part of their time.
func (s *Shaper) of(xs, ys []uint16) *Shape {
	if len(xs) == 1 { // most clusters of X-rays: a shortcut
		return &onePixel
	}
	xmin, xmax, ymin, ymax := xs[0], xs[0], ys[0], ys[0]
	for i := range xs {
		xmin, xmax, ymin, ymax = min(xmin, xs[i]), max(xmax, xs[i]), min(ymin, ys[i]), max(ymax, ys[i])
	}
	if xmax-xmin >= boxSide || ymax-ymin >= boxSide {
		s.last = s.shape(xs, ys, box{xmin, xmax, ymin, ymax})
		return &s.last
	}
	var occupied uint
	for i := range xs {
		occupied |= 1 << (uint(ys[i]-ymin)*boxSide + uint(xs[i]-xmin))
	}
	return s.boxedShape(occupied)
}

// boxedShape is the shape of the pixels of a box (see Shaper.boxed).
func (s *Shaper) boxedShape(occupied uint) *Shape {
	if s.boxed == nil {
		s.boxed, s.known = make([]Shape, 1<<(boxSide*boxSide)), make([]uint64, 1<<(boxSide*boxSide)/64)
	}
	if s.known[occupied/64]&(1<<(occupied%64)) == 0 {
		var xs, ys [boxSide * boxSide]uint16
		var b box // from (0, 0): the box's corner is the cluster's
		n := 0
		for left := occupied; left != 0; left &= left - 1 {
			k := bits.TrailingZeros(left)
			xs[n], ys[n] = uint16(k%boxSide), uint16(k/boxSide)
			b.xmax, b.ymax = max(b.xmax, xs[n]), max(b.ymax, ys[n])
			n++
		}
		s.boxed[occupied] = s.shape(xs[:n], ys[:n], b)
		s.known[occupied/64] |= 1 << (occupied % 64)
	}
	return &s.boxed[occupied]
}

// box is the bounding box of a cluster's pixels, inclusive.
type box struct{ xmin, xmax, ymin, ymax uint16 }

// shape is the shape of the pixels (xs[i], ys[i]), repeats allowed, within
// the box b.
func (s *Shaper) shape(xs, ys []uint16, b box) Shape {
	s.distinct(xs, ys, b)
	defer s.clear()
	n := len(s.keys)
	sh := Shape{Pixels: int32(n)}
	// Moments about the box's corner, so that the sums stay small and
	// exact, and the same whatever the order of the pixels.
	x0, y0 := float64(b.xmin), float64(b.ymin)
	var sx, sy, sxx, syy, sxy float64
	for _, k := range s.keys {
		x, y := float64(k>>16)-x0, float64(k&0xffff)-y0
		sx, sy = sx+x, sy+y
		sxx, syy, sxy = sxx+x*x, syy+y*y, sxy+x*y
	}
	// A pixel with 8 neighbours in the cluster takes 9 pixels.
	if n >= 9 {
		sh.Inner = s.innerPixels()
	}
	fn := float64(n)
	cxx, cyy, cxy := sxx/fn-sx*sx/fn/fn, syy/fn-sy*sy/fn/fn, sxy/fn-sx*sy/fn/fn
	// Eigenvalues of [[cxx cxy] [cxy cyy]].
	half := (cxx - cyy) / 2
	mean, diff := (cxx+cyy)/2, math.Sqrt(half*half+cxy*cxy)
	l1, l2 := mean+diff, max(mean-diff, 0)
	sh.Roundness, sh.Linearity = 1, 0
	if l1 > 0 {
		sh.Roundness, sh.Linearity = l2/l1, (l1-l2)/(l1+l2)
	}
	// The principal axis: (1, 0) when the covariance does not choose one.
	ux, uy := 1.0, 0.0
	if diff > 0 {
		// The eigenvector of l1, from whichever row is better conditioned.
		if cxx >= cyy {
			ux, uy = l1-cyy, cxy
		} else {
			ux, uy = cxy, l1-cxx
		}
		norm := math.Sqrt(ux*ux + uy*uy)
		ux, uy = ux/norm, uy/norm
	}
	lmin, lmax, wmin, wmax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, k := range s.keys {
		x, y := float64(k>>16)-x0, float64(k&0xffff)-y0
		along, across := x*ux+y*uy, -x*uy+y*ux
		lmin, lmax = min(lmin, along), max(lmax, along)
		wmin, wmax = min(wmin, across), max(wmax, across)
	}
	sh.Length, sh.Width = lmax-lmin+1, wmax-wmin+1
	return sh
}

// smallCluster is the most hits whose distinct pixels distinct finds by
// comparing each with those before, in the grid's order (the first hit on
// each pixel), without mapping them: too few to have an inner pixel.
const smallCluster = 8

// distinct lists the distinct pixels of the hits, within the box b, in
// keys, and maps them in the grid (or sorts them, for a box beyond
// maxGrid).
func (s *Shaper) distinct(xs, ys []uint16, b box) {
	if len(xs) <= smallCluster { // most clusters: a look at the few before
		s.useGrid = false
		s.keys = s.keys[:0]
		for i := range xs {
			if k := uint32(xs[i])<<16 | uint32(ys[i]); !slices.Contains(s.keys, k) {
				s.keys = append(s.keys, k)
			}
		}
		return
	}
	s.x0, s.y0 = int(b.xmin)-1, int(b.ymin)-1
	s.words, s.rows = (int(b.xmax)-int(b.xmin)+3+63)/64, int(b.ymax)-int(b.ymin)+3
	area := s.words * s.rows
	s.keys = s.keys[:0]
	s.useGrid = 64*area <= maxGrid
	if !s.useGrid {
		for i := range xs {
			s.keys = append(s.keys, uint32(xs[i])<<16|uint32(ys[i]))
		}
		slices.Sort(s.keys)
		s.keys = slices.Compact(s.keys)
		return
	}
	if len(s.grid) < area {
		s.grid = make([]uint64, area)
	}
	for i := range xs {
		x := int(xs[i]) - s.x0
		at, bit := (int(ys[i])-s.y0)*s.words+x/64, uint64(1)<<(x%64)
		if s.grid[at]&bit == 0 {
			s.grid[at] |= bit
			s.keys = append(s.keys, uint32(xs[i])<<16|uint32(ys[i]))
		}
	}
}

// clear unmaps the cluster's pixels.
func (s *Shaper) clear() {
	if s.useGrid {
		clear(s.grid[:s.words*s.rows])
	}
}

// innerPixels counts the pixels whose 8 neighbours are in the cluster.
func (s *Shaper) innerPixels() int32 {
	if !s.useGrid {
		var n int32
		for _, k := range s.keys {
			if s.inner(int(k>>16), int(k&0xffff)) {
				n++
			}
		}
		return n
	}
	// A word at a time: the pixels whose column of three is in the
	// cluster, then those whose left and right columns are too.
	w := s.words
	var n int
	for y := 1; y < s.rows-1; y++ {
		up, mid, down := s.grid[(y-1)*w:y*w], s.grid[y*w:(y+1)*w], s.grid[(y+1)*w:(y+2)*w]
		var prev uint64 // the column bits of the word before
		col := up[0] & mid[0] & down[0]
		for k := range w {
			var next uint64
			if k+1 < w {
				next = up[k+1] & mid[k+1] & down[k+1]
			}
			left, right := col<<1|prev>>63, col>>1|next<<63
			n += bits.OnesCount64(col & left & right)
			prev, col = col, next
		}
	}
	return int32(n)
}

// inner reports whether the 8 neighbours of pixel (x, y) are in the
// cluster, from the sorted keys.
func (s *Shaper) inner(x, y int) bool {
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if (dx != 0 || dy != 0) && !s.has(x+dx, y+dy) {
				return false
			}
		}
	}
	return true
}

// has reports whether pixel (x, y), within the box's margin, is in the
// cluster, by a binary search of the sorted keys.
func (s *Shaper) has(x, y int) bool {
	if x < 0 || y < 0 || x > 0xffff || y > 0xffff {
		return false
	}
	_, ok := slices.BinarySearch(s.keys, uint32(x)<<16|uint32(y))
	return ok
}
