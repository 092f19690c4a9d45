package pixelsim

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hitflow/hitflow/pixel"
)

// Dataset is a named cluster recipe.
type Dataset struct {
	Name     string
	Paper    string  // what the paper measured
	MeanSize float64 // the paper's mean cluster size, for reference
	cluster  func(g *generator, cx, cy float64)
}

// Datasets lists the recipes, in the order of the paper's table.
var Datasets = []Dataset{
	{"gamma", "Am-241 59.6 keV gamma: size 2.46 +- 2.15", 2.46, gamma},
	{"pion0", "40 GeV/c pions at 0 deg: 7.22 +- 27.35", 7.22, pion(0)},
	{"pion45", "40 GeV/c pions at 45 deg: 23.33 +- 33.47", 23.33, pion(45)},
	{"pion75", "40 GeV/c pions at 75 deg: 60.27 +- 64.33", 60.27, pion(75)},
	{"pb0", "385 GeV/c Pb at 0 deg: 131.84 +- 500.51", 131.84, lead(0)},
	{"pb50", "385 GeV/c Pb at 50 deg: 26.51 +- 274.99", 26.51, lead(50)},
	{"pb90", "385 GeV/c Pb at 90 deg: 20.45 +- 356.57", 20.45, lead(90)},
	{"pblarge", "large Pb clusters: 2231 +- 364", 2231, leadLarge},
	{"pblarge2", "larger Pb clusters: 3623 +- 861", 3623, leadArea(3770, 730)},
	{"pblarge3", "largest Pb clusters: 7258 +- 5105", 7258, leadArea(7500, 6300)},
}

// DatasetByName finds a dataset.
func DatasetByName(name string) (Dataset, error) {
	var names []string
	for _, d := range Datasets {
		if strings.EqualFold(d.Name, name) {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Dataset{}, fmt.Errorf("pixelsim: unknown dataset %q (want one of %s)", name, strings.Join(names, ", "))
}

// Options configure a simulation.
type Options struct {
	Dataset  Dataset
	Hits     int     // hits to generate
	Seed     uint64  // the same seed gives the same stream
	RateMHz  float64 // mean hit rate in Mhit/s
	Disorder pixel.Time
	// Each hit is read out after a random delay up to Disorder, so the
	// stream is Disorder-ordered (see pixel.Sorter); 0 gives sorted output.
	Width, Height int // sensor size, 256 x 256 by default
	Start         pixel.Time
	// Walk is the time walk of the hits; nil is DefaultWalk, &Walk{}
	// none.
	Walk *Walk
}

// Walk is a simulated time walk: a hit of ToT t (25 ns ticks) is
// time-stamped A/(t-B) + C ns late, the usual model of Timepix3 (see
// analysis.TimeWalk, which corrects it).
type Walk struct{ A, B, C float64 }

// DefaultWalk is up to 80 ns late for the smallest signals.
var DefaultWalk = Walk{A: 400, B: -4}

func (o *Options) defaults() error {
	if o.Dataset.cluster == nil {
		o.Dataset = Datasets[0]
	}
	if o.RateMHz == 0 {
		o.RateMHz = 2.5
	}
	if o.Width == 0 {
		o.Width, o.Height = 256, 256
	}
	switch {
	case o.Hits < 0:
		return fmt.Errorf("pixelsim: negative hit count %d", o.Hits)
	case !(o.RateMHz > 0) || math.IsInf(o.RateMHz, 0):
		return fmt.Errorf("pixelsim: hit rate %v Mhit/s must be positive", o.RateMHz)
	case o.Disorder < 0:
		return fmt.Errorf("pixelsim: negative disorder")
	case o.Width < 8 || o.Height < 8 || o.Width > 1<<16 || o.Height > 1<<16:
		return fmt.Errorf("pixelsim: sensor %dx%d out of range 8..65536", o.Width, o.Height)
	}
	if o.Walk == nil {
		o.Walk = &DefaultWalk
	}
	// A hit is never stamped before its cluster arrives: Generate
	// releases the hits up to the latest arrival.
	if w := o.Walk; !(w.A >= 0 && w.B < 1 && w.C >= 0) || math.IsInf(w.A, 1) || math.IsInf(w.C, 1) || math.IsInf(w.B, -1) {
		return fmt.Errorf("pixelsim: time walk %v/(ToT-%v)+%v ns: want a and c finite and not negative, b finite and below 1 (the smallest ToT)", w.A, w.B, w.C)
	}
	return nil
}

// generator builds one cluster at a time into hits.
type generator struct {
	r     *rand.Rand
	walk  Walk
	w, h  int
	seen  []uint32 // cluster stamp per pixel: one hit per pixel per cluster
	stamp uint32
	x, y  []uint16
	tot   []uint16
	dt    []pixel.Time // time after the cluster's arrival
}

// pixelHit adds a hit of ToT tot on pixel (x, y) with a delay, once per
// pixel per cluster and only inside the sensor.
func (g *generator) pixelHit(x, y int, tot float64, delay pixel.Time) {
	if x < 0 || y < 0 || x >= g.w || y >= g.h {
		return
	}
	p := y*g.w + x
	if g.seen[p] == g.stamp {
		return
	}
	g.seen[p] = g.stamp
	t := max(1, min(1023, int(tot)))
	g.x = append(g.x, uint16(x))
	g.y = append(g.y, uint16(y))
	g.tot = append(g.tot, uint16(t))
	// Time walk: small signals cross the threshold late.
	walk := pixel.Time(float64(pixel.Nanosecond) * (g.walk.A/(float64(t)-g.walk.B) + g.walk.C))
	g.dt = append(g.dt, delay+walk+pixel.Time(g.r.Float64()*3*float64(pixel.Nanosecond)))
}

// disc hits the pixels whose centres lie within radius of (cx, cy), and
// always the pixel under the centre, sharing charge by distance.
func (g *generator) disc(cx, cy, radius, charge float64, delay pixel.Time) {
	g.pixelHit(int(cx), int(cy), charge, delay)
	ri := int(radius) + 1
	// Most of the square is outside the disc: a squared distance above
	// radius² by more than its rounding is outside whatever Hypot gives,
	// without the call.
	outside := radius * radius * (1 + 1e-9)
	for y := int(cy) - ri; y <= int(cy)+ri; y++ {
		dy := float64(y) + 0.5 - cy
		for x := int(cx) - ri; x <= int(cx)+ri; x++ {
			dx := float64(x) + 0.5 - cx
			if dx*dx+dy*dy > outside {
				continue
			}
			d := math.Hypot(dx, dy)
			if d <= radius {
				g.pixelHit(x, y, charge*(1-0.7*d/(radius+1)), delay)
			}
		}
	}
}

// track draws a straight track of projected length (pixels) from (cx, cy)
// in direction phi, half width hw, depositing charge per pixel; hits along
// the track arrive spread over spread.
func (g *generator) track(cx, cy, phi, length, hw, charge float64, spread pixel.Time) {
	steps := max(1, int(2*length))
	for s := 0; s <= steps; s++ {
		f := float64(s) / float64(steps)
		px, py := cx+f*length*math.Cos(phi), cy+f*length*math.Sin(phi)
		g.disc(px, py, hw, charge*(0.6+0.8*g.r.Float64()), pixel.Time(f*float64(spread)))
	}
}

// deltaRays adds n short curly tracks starting on random points near (cx, cy).
func (g *generator) deltaRays(cx, cy float64, n int, meanLen float64) {
	for range n {
		l := g.r.ExpFloat64() * meanLen
		g.track(cx+g.r.NormFloat64(), cy+g.r.NormFloat64(), 2*math.Pi*g.r.Float64(), l, 0.45, 30, pixel.Time(l*float64(pixel.Nanosecond)))
	}
}

func gamma(g *generator, cx, cy float64) {
	// Photo-absorption: a charge cloud whose radius spreads the 59.6 keV
	// over one to a dozen pixels.
	g.disc(cx, cy, 0.2+min(g.r.ExpFloat64(), 2.5)*0.56, 60+20*g.r.NormFloat64(), 0)
}

func pion(deg float64) func(g *generator, cx, cy float64) {
	// A MIP crosses 500 um of silicon; its projected length is
	// thickness * tan(angle) / 55 um pitch.
	length := 500 * math.Tan(deg*math.Pi/180) / 55
	return func(g *generator, cx, cy float64) {
		phi := 2 * math.Pi * g.r.Float64()
		g.track(cx, cy, phi, length, 0.75+0.35*g.r.Float64(), 25, pixel.Time(length*2*float64(pixel.Nanosecond)))
		if g.r.Float64() < 0.15 {
			g.deltaRays(cx, cy, 1+g.r.IntN(3), 14)
		}
	}
}

func lead(deg float64) func(g *generator, cx, cy float64) {
	length := 500 * math.Tan(min(deg, 89)*math.Pi/180) / 55
	if deg >= 90 {
		length = 180 // grazing: across most of the chip
	}
	// Most clusters of the Pb runs are small fragments and delta electrons;
	// a few are the ions themselves, with huge charge and a halo.
	ion := map[float64]float64{0: 0.3, 50: 0.055, 90: 0.015}[deg]
	return func(g *generator, cx, cy float64) {
		if g.r.Float64() >= ion {
			pion(0)(g, cx, cy)
			return
		}
		phi := 2 * math.Pi * g.r.Float64()
		if length < 1 {
			g.disc(cx, cy, 4+5*g.r.Float64(), 1000, 0) // the "volcano"
		} else {
			g.track(cx, cy, phi, length, 2+g.r.Float64(), 900, pixel.Time(length*3*float64(pixel.Nanosecond)))
		}
		g.deltaRays(cx, cy, 20+g.r.IntN(60), 10)
	}
}

func leadLarge(g *generator, cx, cy float64) {
	g.disc(cx, cy, 27.5+2*g.r.NormFloat64(), 1000, 0)
	g.deltaRays(cx, cy, 20+g.r.IntN(40), 10)
}

// leadArea draws Pb ion clusters whose core covers a log-normal number of
// pixels with the given mean and standard deviation, kept on the sensor
// (the paper's subsets of large clusters are whole clusters), with delta
// rays.
func leadArea(mean, std float64) func(g *generator, cx, cy float64) {
	sigma2 := math.Log(1 + std*std/(mean*mean))
	mu := math.Log(mean) - sigma2/2
	return func(g *generator, cx, cy float64) {
		area := math.Exp(mu + math.Sqrt(sigma2)*g.r.NormFloat64())
		r := min(math.Sqrt(area/math.Pi), float64(min(g.w, g.h))/2-2)
		cx = r + 1 + cx/float64(g.w)*(float64(g.w)-2*r-2)
		cy = r + 1 + cy/float64(g.h)*(float64(g.h)-2*r-2)
		g.disc(cx, cy, r, 1000, 0)
		g.deltaRays(cx, cy, 20+g.r.IntN(40), 10)
	}
}

// readoutOrder returns in order the indices of key sorted by key, equal
// keys by index (a stable sort), reusing order and packed. Each key's
// offset from the least and its index packed into a word, when they fit,
// sort without a comparison function: several times faster.
func readoutOrder(order []int, packed []uint64, key []pixel.Time) ([]int, []uint64) {
	order = order[:0]
	if len(key) == 0 {
		return order, packed
	}
	lo, hi := slices.Min(key), slices.Max(key)
	idxBits := uint(bits.Len(uint(len(key) - 1)))
	if uint(bits.Len64(uint64(hi-lo)))+idxBits > 64 {
		for i := range key {
			order = append(order, i)
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(key[a], key[b]) })
		return order, packed
	}
	packed = packed[:0]
	for i, k := range key {
		packed = append(packed, uint64(k-lo)<<idxBits|uint64(i))
	}
	slices.Sort(packed)
	for _, p := range packed {
		order = append(order, int(p&(1<<idxBits-1)))
	}
	return order, packed
}

// Validate checks the options as Generate does.
func Validate(opt Options) error { return opt.defaults() }

// Generate streams the simulated hits to emit in batches (the batch is
// reused after emit returns). Times start at opt.Start.
func Generate(opt Options, emit func(*pixel.Hits) error) error {
	if err := opt.defaults(); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	// A stream of its own, so that the disorder changes only the order.
	readout := rand.New(rand.NewPCG(opt.Seed, 0x5bd1e995))
	g := &generator{r: r, walk: *opt.Walk, w: opt.Width, h: opt.Height, seen: make([]uint32, opt.Width*opt.Height)}
	// Clusters per ns so that hits come at RateMHz on average.
	clusterRate := opt.RateMHz / 1000 / max(opt.Dataset.MeanSize, 1)
	const block = 1 << 15 // clusters per release block
	// The hits not yet released and their readout times, and the storage
	// the next block's leftovers go to: reused, as is the order.
	var pending, spare, out pixel.Hits
	var key, spareKey []pixel.Time
	var order []int
	var packed []uint64
	t := float64(opt.Start)
	left := opt.Hits
	for left > 0 {
		for c := 0; c < block && left > 0; c++ {
			t += r.ExpFloat64() / clusterRate * float64(pixel.Nanosecond)
			g.stamp++
			g.x, g.y, g.tot, g.dt = g.x[:0], g.y[:0], g.tot[:0], g.dt[:0]
			opt.Dataset.cluster(g, r.Float64()*float64(g.w), r.Float64()*float64(g.h))
			for i := range g.x[:min(len(g.x), left)] {
				toa := pixel.Time(t) + g.dt[i]
				toa -= toa % 100 // the 1.5625 ns grid of Timepix3
				pending.Append(g.x[i], g.y[i], toa, g.tot[i])
				k := toa
				if opt.Disorder > 0 {
					k += pixel.Time(readout.Int64N(int64(opt.Disorder) + 1))
				}
				key = append(key, k)
			}
			left -= min(len(g.x), left)
		}
		// Every later hit arrives after t, so keys up to t are final.
		limit := pixel.Time(t)
		if left == 0 {
			limit = math.MaxInt64
		}
		order, packed = readoutOrder(order, packed, key)
		out.Reset()
		spare.Reset()
		spareKey = spareKey[:0]
		for _, i := range order {
			dst := &out
			if key[i] > limit {
				dst, spareKey = &spare, append(spareKey, key[i])
			}
			dst.Append(pending.X[i], pending.Y[i], pending.ToA[i], pending.ToT[i])
		}
		pending, spare = spare, pending
		key, spareKey = spareKey, key
		if out.Len() > 0 {
			if err := emit(&out); err != nil {
				return err
			}
		}
	}
	return nil
}
