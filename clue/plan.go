package clue

// MaxDim is the most coordinates a point may have.
const MaxDim = maxDim

// Plan is the fixed-grid index of a run as numbers, for a device that
// builds the same index (clue/cluecl): the same tiles, so that it meets
// every point's neighbours in the order Run does and sums its density to
// the same bits. A point's tile is, with cell(d, v) = the integer part of
// min(max((v - Lo[d]) * Inv[d], 0), Last[d]):
//
//	layer*PerLayer + sum over d of cell(d, x[d]) * (N[0]*...*N[d-1])
//
// with layer the point's layer id minus LayerOffset, or its place in
// Layers when that is not empty. The points of a tile are in input
// order; a search of radius r reads, on the point's layer, the tiles
// from cell(d, x[d] - Pad(r)) to cell(d, x[d] + Pad(r)), rows along the
// dimensions from 1 up (dimension 1 the fastest), each row's tiles along
// dimension 0 as one run, and keeps the points whose squared distance
// (summed in dimension order, each square rounded alone) is at most
// Threshold(r).
type Plan struct {
	Dim           int
	Lo, Inv, Last [MaxDim]float64
	N             [MaxDim]int
	PerLayer      int
	Tiles         int
	LayerOffset   int32
	Layers        []int32
}

// NewPlan checks the points and the parameters as Run does and returns
// the grid Run would build.
func NewPlan(pts *Points, p Params) (*Plan, error) { return NewPlanCopying(pts, p, nil) }

// NewPlanCopying is NewPlan that also copies the points' weights and
// coordinates into those of to (as long, as many dimensions; to nil: no
// copy) as it reads them, for a device's staging memory: the points are
// read once where NewPlan and a copy read them twice. The layers are not
// copied (see Events.ViewInto).
func NewPlanCopying(pts *Points, p Params, to *Points) (*Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := pts.CheckShape(); err != nil {
		return nil, err
	}
	c := &Clusterer{}
	ext, err := c.extents(pts, to)
	if err != nil {
		return nil, err
	}
	if err := c.grid.build(pts, p, &ext); err != nil {
		return nil, err
	}
	g := &c.grid
	return &Plan{Dim: g.dim, Lo: g.lo, Inv: g.inv, Last: g.last, N: g.n, PerLayer: g.perLayer, Tiles: g.tiles,
		LayerOffset: g.offset, Layers: g.layers}, nil
}

// Pad is a search radius widened as Run widens it for the tiles it reads.
func Pad(r float64) float64 { return pad(r) }

// Threshold is the largest squared distance whose square root is at most
// r: the exact test of a distance against r.
func Threshold(r float64) float64 { return threshold(r) }

// FirstRadius is the radius of Run's first nearest-higher search; the
// nearest higher point within it, when there is one, is the nearest
// within DM.
func (p Params) FirstRadius() float64 { return p.firstRadius() }
