//go:build !(goexperiment.simd && amd64)

package clue

func (c *Clusterer) flatDensity2D(lo, hi int, r, limit, firstLimit float64, s *scratch) {
	c.flatDensity2DGo(lo, hi, r, limit, firstLimit, s)
}

func (c *Clusterer) nearestHigher2D(i int, r, limit float64) (int32, float64, bool) {
	return c.nearestHigher2DGo(i, r, limit)
}

func (c *Clusterer) nearestHigher2DRange(lo, hi int, rd *radii, s *scratch) {
	c.nearestHigher2DPoints(lo, hi, rd, s)
}

// blockScans reports whether the 2D scans go by blocks of points: only
// in the vector build.
func blockScans() bool { return false }

// ScanPath names the code that runs the 2D scans of the flat density and
// the nearest-higher search, which benchmark numbers depend on.
func ScanPath() string { return "scalar (no vector code in this build)" }
