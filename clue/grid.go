package clue

import (
	"fmt"
	"math"
	"slices"
)

// maxSplit is how many times narrower than tall the tiles are along
// dimension 0 at most, and splitBudget how many tiles per point that may
// take (see grid.build).
const maxSplit, splitBudget = 4, 6

// maxDim bounds the number of coordinates (fixed-size scratch per point).
const maxDim = 16

// grid is the fixed-grid index: every layer is cut into tiles of the tile
// size along every dimension but the first, along which they are up to
// maxSplit times narrower (see build); tile t of layer l has id
// l*perLayer + t, where t runs fastest along dimension 0, so tiles
// adjacent along dimension 0 hold contiguous runs of points.
type grid struct {
	dim      int
	lo       [maxDim]float64 // lower corner of the data
	n        [maxDim]int     // tiles per dimension
	size     float64         // tile size (along dimension 0: see inv)
	inv      [maxDim]float64 // 1/width of the tiles along each dimension
	last     [maxDim]float64 // n - 1 along each dimension
	perLayer int
	tiles    int
	layers   []int32 // sorted distinct layer ids, when they must be remapped
	offset   int32   // layer id of layer index 0 when not remapped
	start    []int32 // points of tile t are [start[t], start[t+1])
}

// span is a contiguous run of grid-ordered points.
type span struct{ lo, hi int32 }

// build sizes the grid for the points, whose extent is e, and the
// parameters.
func (g *grid) build(pts *Points, p Params, e *extent) error {
	n := pts.Len()
	g.dim = pts.Dim()
	g.lo = e.lo
	hi := &e.hi
	// Layers: an offset when their ids are compact, else a sorted remap.
	layers := 1
	g.layers, g.offset = g.layers[:0], 0
	if len(pts.Layer) > 0 && n > 0 {
		lmin, lmax := e.lmin, e.lmax
		if int64(lmax)-int64(lmin) < int64(n)+1024 {
			g.offset, layers = lmin, int(lmax-lmin)+1
		} else {
			g.layers = append(g.layers, pts.Layer...)
			slices.Sort(g.layers)
			g.layers = slices.Compact(g.layers)
			layers = len(g.layers)
		}
	}
	g.size = p.TileSize
	if g.size == 0 {
		g.size = p.DM()
	}
	// Grow the tiles until the grid has at most about four tiles per point;
	// a tile size given by the caller may use four times that.
	budget := float64(max(4*n, 1<<16))
	for d := range g.dim {
		if math.IsInf(hi[d]-g.lo[d], 0) {
			return fmt.Errorf("clue: coordinate %d spans %g to %g, beyond what float64 differences hold", d, g.lo[d], hi[d])
		}
	}
	for {
		// Tile counts in float64 until they are known to be small: a huge
		// extent would overflow int.
		per := 1.0
		var tiles [maxDim]float64
		for d := range g.dim {
			tiles[d] = math.Floor((hi[d]-g.lo[d])/g.size) + 1
			per *= tiles[d]
		}
		if per*float64(layers) <= budget || p.TileSize != 0 && per*float64(layers) <= 4*budget {
			for d := range g.dim {
				g.n[d] = int(tiles[d])
			}
			g.perLayer = int(per)
			break
		}
		if p.TileSize != 0 {
			return fmt.Errorf("clue: tile size %v needs %.3g tiles; use a larger one", p.TileSize, per*float64(layers))
		}
		g.size *= math.Max(1.25, math.Pow(per*float64(layers)/budget, 1/float64(g.dim)))
	}
	// Tiles adjacent along dimension 0 hold contiguous points, so a search
	// reads one run per row of tiles whatever their width there: narrower
	// tiles along it cost only a longer tile table and cut the strip that
	// a search reads, from about 2r + size to 2r + size/split wide.
	rows := g.perLayer / g.n[0] * layers
	split := 1
	for q := maxSplit; q > 1; q /= 2 {
		nx := math.Floor((hi[0]-g.lo[0])*float64(q)/g.size) + 1
		if nx*float64(rows) <= splitBudget*float64(max(n, 1<<14)) {
			split = q
			break
		}
	}
	for d := range g.dim {
		g.inv[d] = 1 / g.size
	}
	g.inv[0] = float64(split) / g.size
	g.n[0] = int(math.Floor((hi[0]-g.lo[0])*g.inv[0])) + 1
	g.perLayer = rows / layers * g.n[0]
	for d := range g.dim {
		g.last[d] = float64(g.n[d] - 1)
	}
	g.tiles = g.perLayer * layers
	return nil
}

// layerIndex maps a layer id to 0..layers-1.
func (g *grid) layerIndex(l int32) int {
	if len(g.layers) == 0 {
		return int(l - g.offset)
	}
	i, _ := slices.BinarySearch(g.layers, l)
	return i
}

// cell is the tile coordinate of x along dimension d, clamped to the grid.
func (g *grid) cell(d int, x float64) int { return clampCell((x-g.lo[d])*g.inv[d], g.last[d]) }

// clampCell is the cell of v tiles from the grid's start, clamped to
// [0, last] as a float, so that a coordinate far outside the grid cannot
// overflow the conversion; by comparisons rather than min and max, which
// pay for NaNs (there are none) in every call.
func clampCell(v, last float64) int {
	if v < 0 {
		v = 0
	}
	if v > last {
		v = last
	}
	return int(v)
}

// tilesOf sets dst[i] to the tile of input point i for i in [lo, hi),
// in 2D with compact layer ids by one loop over the columns (the general
// tileOf costs a hundred instructions a point).
func (g *grid) tilesOf(pts *Points, lo, hi int, dst []int32) {
	if g.dim != 2 || len(g.layers) != 0 {
		for i := lo; i < hi; i++ {
			dst[i] = g.tileOf(pts, i)
		}
		return
	}
	xs, ys, out := pts.Coords[0][lo:hi], pts.Coords[1][lo:hi], dst[lo:hi]
	ys, out = ys[:len(xs)], out[:len(xs)]
	var layers []int32
	if len(pts.Layer) > 0 {
		layers = pts.Layer[lo:hi][:len(xs)]
	}
	x0, y0, ix, iy, lastX, lastY := g.lo[0], g.lo[1], g.inv[0], g.inv[1], g.last[0], g.last[1]
	nx, per, offset := g.n[0], g.perLayer, g.offset
	for k, x := range xs {
		t := clampCell((ys[k]-y0)*iy, lastY)*nx + clampCell((x-x0)*ix, lastX)
		if layers != nil {
			t += int(layers[k]-offset) * per
		}
		out[k] = int32(t)
	}
}

// tileOf returns the tile id of input point i.
func (g *grid) tileOf(pts *Points, i int) int32 {
	t := 0
	for d := g.dim - 1; d >= 0; d-- {
		t = t*g.n[d] + g.cell(d, pts.Coords[d][i])
	}
	l := 0
	if len(pts.Layer) > 0 {
		l = g.layerIndex(pts.Layer[i])
	}
	return int32(l*g.perLayer + t)
}

// spans appends the runs of points in the tiles touched by the box
// [x - r, x + r] on the layer whose first tile is base. The box is padded
// by a relative 1e-9 so that rounding in the distance can never hide a
// point that the exact test accepts.
func (g *grid) spans(x []float64, r float64, base int, dst []span) []span {
	r = pad(r)
	var lo, hi, c [maxDim]int
	for d := range g.dim {
		lo[d], hi[d] = g.cell(d, x[d]-r), g.cell(d, x[d]+r)
		c[d] = lo[d]
	}
	for {
		// One run along dimension 0 for the current cell of the others.
		row := 0
		for d := g.dim - 1; d >= 1; d-- {
			row = row*g.n[d] + c[d]
		}
		row = base + row*g.n[0]
		if s, e := g.start[row+lo[0]], g.start[row+hi[0]+1]; s < e {
			dst = append(dst, span{s, e})
		}
		d := 1
		for ; d < g.dim; d++ {
			if c[d] < hi[d] {
				c[d]++
				break
			}
			c[d] = lo[d]
		}
		if d >= g.dim {
			return dst
		}
	}
}

// box2D is the tiles that a 2D search reads: columns x0..x1 of the rows
// whose column 0 is tile first, first + n[0], ..., last.
type box2D struct{ x0, x1, first, last int }

// box2D returns the tiles touched by the box [x - r, x + r] x [y - r,
// y + r] on the layer whose first tile is base, padded as in spans.
func (g *grid) box2D(x, y, r float64, base int) box2D {
	r = pad(r)
	return box2D{
		x0: g.cell(0, x-r), x1: g.cell(0, x+r),
		first: base + g.cell(1, y-r)*g.n[0], last: base + g.cell(1, y+r)*g.n[0],
	}
}

// pad widens a search radius by a relative 1e-9 (see spans).
func pad(r float64) float64 { return r*(1+1e-9) + 1e-300 }
