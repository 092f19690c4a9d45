package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/internal/prefault"
	"github.com/hitflow/hitflow/pixel"
)

// Grid is a grid of bins finer than the pixels (super-resolution: Scale
// bins across each pixel) over a sensor. Pixel p spans p-0.5 to p+0.5
// (its centre is the centroid of a one-pixel cluster), so bin i spans
// i/Scale-0.5 to (i+1)/Scale-0.5.
type Grid struct {
	Width, Height int // bins across (x) and up (y): the sensor's pixels times Scale
	Scale         int

	xEdges, yEdges []float64 // bin i from edge i to edge i+1, as float64 divides
}

// NewGrid makes the grid of a width x height sensor at scale bins per
// pixel.
func NewGrid(width, height, scale int) (Grid, error) {
	if width < 1 || height < 1 || width > 1<<16 || height > 1<<16 {
		return Grid{}, fmt.Errorf("sensor %dx%d out of range 1..65536", width, height)
	}
	if scale < 1 || scale > 256 {
		return Grid{}, fmt.Errorf("scale %d: want 1 to 256 bins per pixel", scale)
	}
	g := Grid{Width: width * scale, Height: height * scale, Scale: scale}
	g.xEdges, g.yEdges = edges(g.Width, scale), edges(g.Height, scale)
	return g, nil
}

// Bin is the bin of a centroid, y*Width + x, and whether it is on the
// grid (a NaN centroid is not).
func (g *Grid) Bin(x, y float64) (int, bool) {
	bx, okx := g.bin(x, g.xEdges)
	by, oky := g.bin(y, g.yEdges)
	return by*g.Width + bx, okx && oky
}

// Image counts clusters by their centroid on a Grid, in one image or in
// a stack of images by time of flight. Filling is streaming: memory is
// the image's, whatever the clusters.
type Image struct {
	Grid
	TOF TOFBins // N == 0: one image of every cluster
	// Counts holds bin (x, y) of time-of-flight bin k at
	// (k*Height+y)*Width + x.
	Counts []uint32
	// Clusters counted, and those left out: with a centroid outside the
	// sensor, without a time of flight (before the first pulse), with
	// one outside the bins.
	Counted, Outside, NoPulse, OutOfTOF int64

	keys, sorted []uint32 // Fill's bins of a batch, as found and by region
	starts       []int32  // Fill's regions' starts in sorted
}

// TOFBins are N equal bins of time of flight from Min to Max.
type TOFBins struct {
	Min, Max pixel.Time
	N        int
}

// Width is the width of one bin.
func (b TOFBins) Width() float64 { return float64(b.Max-b.Min) / float64(b.N) }

// ParseTOFBins reads "MIN:MAX:N" (times as pixel.ParseTime takes them:
// 0:20ms:1000).
func ParseTOFBins(s string) (TOFBins, error) {
	f := strings.Split(s, ":")
	var b TOFBins
	var err1, err2, err3 error
	if len(f) == 3 {
		b.Min, err1 = pixel.ParseTime(f[0])
		b.Max, err2 = pixel.ParseTime(f[1])
		b.N, err3 = strconv.Atoi(f[2])
	}
	if len(f) != 3 || errors.Join(err1, err2, err3) != nil || b.N < 1 || b.Max <= b.Min {
		return TOFBins{}, fmt.Errorf("time-of-flight bins %q: want MIN:MAX:N, like 0:20ms:1000, with MAX above MIN and N at least 1", s)
	}
	return b, nil
}

// MaxImageBins bounds the bins of an Image (4 bytes each).
const MaxImageBins = 1 << 30

// NewImage makes an empty image of a width x height sensor at scale bins
// per pixel, with the time-of-flight bins tof (none when tof.N is 0).
func NewImage(width, height, scale int, tof TOFBins) (*Image, error) {
	g, err := NewGrid(width, height, scale)
	if err != nil {
		return nil, err
	}
	if tof.N < 0 || tof.N > 0 && tof.Max <= tof.Min {
		return nil, fmt.Errorf("time-of-flight bins %+v: want N >= 0 and Max above Min", tof)
	}
	images := max(tof.N, 1)
	bins := int64(g.Width) * int64(g.Height) * int64(images)
	if bins > MaxImageBins {
		return nil, fmt.Errorf("%d x %d bins in %d images is %d bins (%.1f GB), more than %d: use a smaller scale or fewer time-of-flight bins",
			g.Width, g.Height, images, bins, float64(bins)*4/1e9, MaxImageBins)
	}
	// Huge pages: the image is filled and written whole, a fault a 4 KiB
	// page of it had been a third of an image's making.
	return &Image{Grid: g, TOF: tof, Counts: prefault.Make[uint32](int(bins), 0)}, nil
}

// edges are the n+1 edges of n bins of 1/scale pixel from -0.5.
func edges(n, scale int) []float64 {
	e := make([]float64, n+1)
	for i := range e {
		e[i] = float64(i)/float64(scale) - 0.5
	}
	return e
}

// ErrNoTOF is the error of filling a stack in time of flight with
// clusters that have none.
var ErrNoTOF = errors.New("the clusters carry no time of flight (hitflow cluster --tof)")

// Fill counts the clusters of c. An image in time of flight needs c's
// time of flight (see pixel.Clusters.HasTOF).
//
// The clusters' bins are counted region by region of the image (64 Ki
// bins, 256 KiB of counts), not in the clusters' order: centroids in
// time order land all over an image of tens of megabytes, each count a
// miss of the caches, four times slower.
func (im *Image) Fill(c *pixel.Clusters) error {
	if im.TOF.N > 0 && !c.HasTOF() {
		return ErrNoTOF
	}
	// In slices of a bounded number of clusters: the scratch stays small.
	for i := 0; i < c.Len(); i += fillSlice {
		if err := im.fill(c, i, min(i+fillSlice, c.Len())); err != nil {
			return err
		}
	}
	return nil
}

// fillSlice is the most clusters fill takes at a time.
const fillSlice = 1 << 16

// fill is Fill for clusters [lo, hi) of c.
func (im *Image) fill(c *pixel.Clusters, lo, hi int) error {
	span := uint64(im.TOF.Max - im.TOF.Min)
	plane := im.Width * im.Height
	keys := im.keys[:0]
	for i := lo; i < hi; i++ {
		k, ok := im.Bin(c.X[i], c.Y[i])
		if !ok {
			im.Outside++
			continue
		}
		if im.TOF.N > 0 {
			if c.Pulse[i] < 0 {
				im.NoPulse++
				continue
			}
			t := c.TOF[i]
			if t < im.TOF.Min || t >= im.TOF.Max {
				im.OutOfTOF++
				continue
			}
			// (t-Min)*N/(Max-Min) in integers: a time on a bin's edge is
			// in the bin it starts, whatever the rounding of its width.
			hi, lo := bits.Mul64(uint64(t-im.TOF.Min), uint64(im.TOF.N))
			b, _ := bits.Div64(hi, lo, span)
			k += int(b) * plane
		}
		keys = append(keys, uint32(k)) // below MaxImageBins
	}
	im.keys = keys
	im.sorted = slices.Grow(im.sorted[:0], len(keys))[:len(keys)]
	regions := len(im.Counts)>>regionBits + 1
	starts := slices.Grow(im.starts[:0], regions+1)[:regions+1]
	clear(starts)
	im.starts = starts
	for _, k := range keys {
		starts[k>>regionBits+1]++
	}
	for r := range regions {
		starts[r+1] += starts[r]
	}
	for _, k := range keys {
		r := k >> regionBits
		im.sorted[starts[r]] = k
		starts[r]++
	}
	for n, k := range im.sorted {
		if im.Counts[k] == math.MaxUint32 {
			im.Counted += int64(n)
			return fmt.Errorf("image bin %d holds 2^32-1 clusters, all it can count", k)
		}
		im.Counts[k]++
	}
	im.Counted += int64(len(keys))
	return nil
}

// regionBits is the log2 of the bins of a region Fill counts at a time.
const regionBits = 16

// bin is the bin holding coordinate v among the bins between edges: the
// i with edge i <= v < edge i+1 (a centroid on an edge goes to the bin
// it starts).
func (g *Grid) bin(v float64, edges []float64) (int, bool) {
	n := len(edges) - 1
	f := (v + 0.5) * float64(g.Scale)
	if !(f > -1 && f < float64(n)+1) { // NaN too
		return 0, false
	}
	// f is within one bin of the answer: the edges settle it.
	i := min(max(int(math.Floor(f)), 0), n-1)
	switch {
	case v < edges[i]:
		i--
	case v >= edges[i+1]:
		i++
	}
	return i, i >= 0 && i < n
}

// Sum is the image of every time-of-flight bin together.
func (im *Image) Sum() []uint64 {
	plane := im.Width * im.Height
	sum := make([]uint64, plane)
	for k, n := range im.Counts {
		sum[k%plane] += uint64(n)
	}
	return sum
}
