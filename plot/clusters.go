package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"go-hep.org/x/hep/hbook"
	"go-hep.org/x/hep/hplot"
	gplot "gonum.org/v1/plot"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// ClusterScan reads clusters from the start, a batch at a time: fn gets
// each batch, valid during the call, as format.ScanClusters gives them.
// The cluster figures read a file three times over (see NewOverview),
// holding their bins, not the clusters: a run of billions of clusters
// plots in the memory of its figures.
type ClusterScan func(fn func(*pixel.Clusters) error) error

// scanOf is the scan of clusters in memory.
func scanOf(c *pixel.Clusters) ClusterScan {
	return func(fn func(*pixel.Clusters) error) error { return fn(c) }
}

// holdMost is the most spectrum values a figure holds to find its upper
// edge (see rankSelect): 8 MiB.
const holdMost = 1 << 20

// clusterTally is what the figures know of the clusters: a first pass
// over them gives the counts and extremes that set the bins, the
// spectrum's upper edge takes one pass more as a rule, and a last pass
// fills the bins.
type clusterTally struct {
	n, sizeSum         int64
	largest            int32
	t0, t1             pixel.Time
	calibrated, shapes bool
	width, height      int     // the sensor, grown to hold every cluster
	low                float64 // the least spectrum value
	path               float64 // metres, for the neutron spectra
	tofs               [3]tofRange
	hi                 float64 // the spectrum's upper edge
	binWidth           float64 // the spectrum's bins, keV or (whole) ticks
	span               float64 // s, from the first cluster to the last

	sizes, spectrum, times, classes *hbook.H1D
	edges                           []float64 // of sizes, when not one a bin
	over                            int64     // spectrum values from hi on
	tofHists                        [3]*hbook.H1D
	image                           *analysis.Image
}

// tofRange is the extent of a spectrum of the time of flight.
type tofRange struct {
	n      int64
	lo, hi float64
}

// spectrumValue is the energy of cluster i, or its ToT sum.
func spectrumValue(c *pixel.Clusters, i int) float64 {
	if c.Calibrated {
		return c.ESum[i]
	}
	return float64(c.ToTSum[i])
}

// tofValue is a cluster's time of flight (ms), neutron energy (log10 eV)
// or wavelength (Å) over path metres, and false before the first pulse
// (and for energies and wavelengths, at a time of flight of zero).
func tofValue(what Spectrum, t pixel.Time, pulse int64, path float64) (float64, bool) {
	switch {
	case pulse < 0 || what != TOFSpectrum && t <= 0:
		return 0, false
	case what == EnergySpectrum:
		return math.Log10(analysis.NeutronEnergy(t, path)), true
	case what == WavelengthSpectrum:
		return analysis.NeutronWavelength(t, path), true
	}
	return t.Ns() / 1e6, true
}

// tallyClusters reads the clusters of scan as the figures need them;
// width and height are the sensor's least size, path the flight path in
// metres (0: no neutron spectra).
func tallyClusters(scan ClusterScan, width, height int, path float64) (*clusterTally, error) {
	t := &clusterTally{width: width, height: height, path: path}
	// The first pass: counts, extremes, and the spectrum's values
	// counted for its quantile.
	rank := newRankSelect(holdMost)
	values := func(c *pixel.Clusters) {
		for i := range c.Len() {
			rank.add(spectrumValue(c, i))
		}
	}
	err := scan(func(c *pixel.Clusters) error {
		if c.Len() == 0 {
			return nil
		}
		values(c)
		if t.n == 0 {
			t.calibrated, t.shapes = c.Calibrated, c.HasShapes()
			t.t0, t.t1, t.low = c.FirstToA[0], c.FirstToA[0], spectrumValue(c, 0)
		}
		t.n += int64(c.Len())
		for i, s := range c.Size {
			t.sizeSum += int64(s)
			t.largest = max(t.largest, s)
			t.t0, t.t1 = min(t.t0, c.FirstToA[i]), max(t.t1, c.FirstToA[i])
			t.low = min(t.low, spectrumValue(c, i))
			t.width, t.height = max(t.width, int(c.XMax[i])+1), max(t.height, int(c.YMax[i])+1)
		}
		if c.HasTOF() {
			for what := range t.tofs {
				if what != int(TOFSpectrum) && path <= 0 {
					continue
				}
				r := &t.tofs[what]
				for i, p := range c.Pulse {
					if v, ok := tofValue(Spectrum(what), c.TOF[i], p, path); ok {
						if r.n == 0 {
							r.lo, r.hi = v, v
						}
						r.n++
						r.lo, r.hi = min(r.lo, v), max(r.hi, v)
					}
				}
			}
		}
		return nil
	})
	if err != nil || t.n == 0 {
		return t, err
	}
	// The spectrum up to its 99.9th percentile, which takes the first
	// pass's counts and one pass more as a rule.
	rank.k = int64(0.999 * float64(t.n-1))
	for !rank.pass() {
		if err := scan(func(c *pixel.Clusters) error { values(c); return nil }); err != nil {
			return t, err
		}
	}
	t.hi = rank.value
	return t, nil
}

// fill bins the clusters of scan, in a last pass.
func (t *clusterTally) fill(scan ClusterScan) error {
	if t.n == 0 {
		return nil
	}
	largest := int(t.largest)
	if largest <= 100 {
		t.sizes = hbook.NewH1D(largest, 0.5, float64(largest)+0.5)
	} else {
		t.edges = sizeEdges(largest)
		t.sizes = hbook.NewH1DFromEdges(t.edges)
	}
	lo, hi := min(0, t.low), t.hi
	if hi <= lo {
		hi = lo + 1
	}
	t.spectrum, t.binWidth = hbook.NewH1D(200, lo, hi), (hi-lo)/200
	if !t.calibrated {
		// ToT sums are whole: bins of a whole number of ticks, from half
		// a tick below one to half a tick below another (a bin of 3.1
		// ticks holds three values or four, a comb of spikes).
		ticks := math.Ceil((hi - lo) / 200)
		n := int(math.Ceil((hi - lo + 1) / ticks))
		t.spectrum, t.binWidth = hbook.NewH1D(n, lo-0.5, lo-0.5+float64(n)*ticks), ticks
		hi = lo - 0.5 + float64(n)*ticks
	}
	t.hi = hi
	t.span = math.Max((t.t1-t.t0).Ns()/1e9, 1e-9)
	t.times = hbook.NewH1D(200, 0, t.span*1.0001)
	t.classes = hbook.NewH1D(len(analysis.Classes), 0, float64(len(analysis.Classes)))
	for what, r := range t.tofs {
		if r.n > 0 {
			t.tofHists[what] = hbook.NewH1D(200, r.lo, r.hi+math.Max((r.hi-r.lo)*1e-4, 1e-9))
		}
	}
	var err error
	if t.image, err = analysis.NewImage(t.width, t.height, 1, analysis.TOFBins{}); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return scan(func(c *pixel.Clusters) error {
		for i, s := range c.Size {
			if t.edges == nil {
				t.sizes.Fill(float64(s), 1)
			} else {
				// A cluster weighs one over the sizes its bin holds.
				k, _ := slices.BinarySearch(t.edges, float64(s))
				t.sizes.Fill(float64(s), 1/(t.edges[k]-t.edges[k-1]))
			}
			if x := spectrumValue(c, i); x >= t.hi {
				t.over++
			} else {
				t.spectrum.Fill(x, 1)
			}
			t.times.Fill((c.FirstToA[i]-t.t0).Ns()/1e9, 1)
		}
		for _, k := range c.Class {
			t.classes.Fill(float64(k)+0.5, 1)
		}
		for what, h := range t.tofHists {
			if h == nil || !c.HasTOF() {
				continue
			}
			for i, p := range c.Pulse {
				if v, ok := tofValue(Spectrum(what), c.TOF[i], p, t.path); ok {
					h.Fill(v, 1)
				}
			}
		}
		if err := t.image.Fill(c); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		return nil
	})
}

// drawTallied draws a figure of the tally of clusters in memory, with a
// flight path of path metres.
func drawTallied(c *pixel.Clusters, path float64, draw func(*clusterTally) error) error {
	t, err := tallyClusters(scanOf(c), 0, 0, path)
	if err == nil {
		err = t.fill(scanOf(c))
	}
	if err != nil {
		return err
	}
	return draw(t)
}

// errNoClusters is the error of a figure of no clusters.
var errNoClusters = fmt.Errorf("no clusters to plot")

// ClusterSize draws the distribution of cluster sizes: one bin per
// size where the sizes are small, about 20 bins a decade beyond 20 pixels
// on a logarithmic axis, each bin from one whole size to another so that
// no bin falls between two sizes and stays empty. The bars are clusters
// per size (the count over the sizes a bin holds).
func ClusterSize(w io.Writer, c *pixel.Clusters, format string) error {
	return drawTallied(c, 0, func(t *clusterTally) error { return t.drawSize(w, format) })
}

func (t *clusterTally) drawSize(w io.Writer, format string) error {
	if t.n == 0 {
		return errNoClusters
	}
	title := fmt.Sprintf("%d clusters, mean size %.2f pixels", t.n, float64(t.sizeSum)/float64(t.n))
	if t.edges == nil {
		return histogram(w, t.sizes, true, pixelTicks{}, title, "cluster size (pixels)", "clusters", format)
	}
	p := newPlot()
	p.Title.Text = title
	p.X.Label.Text = "cluster size (pixels)"
	p.Y.Label.Text = "clusters per size"
	hh := hplot.NewH1D(t.sizes, hplot.WithLogY(true))
	hh.FillColor = color.RGBA{R: 80, G: 120, B: 200, A: 255}
	hh.LineStyle.Color = color.RGBA{R: 30, G: 50, B: 110, A: 255}
	p.Add(hh)
	p.X.Scale, p.X.Tick.Marker = gplot.LogScale{}, gplot.LogTicks{Prec: -1}
	p.Y.Scale, p.Y.Tick.Marker = gplot.LogScale{}, gplot.LogTicks{Prec: -1}
	return writeFigure(w, p, nil, Width, Width*3/4, format)
}

// sizeEdges are bin edges for sizes 1 to largest: one size a bin up to
// 20, then about 20 bins a decade, every edge halfway between two sizes.
func sizeEdges(largest int) []float64 {
	edges := []float64{0.5}
	for lo := 1; lo <= largest; {
		hi := max(lo+1, int(math.Round(float64(lo)*math.Pow(10, 1.0/20))))
		edges = append(edges, float64(hi)-0.5)
		lo = hi
	}
	return edges
}

// ClusterSpectrum draws the energy spectrum of the clusters (the ToT
// sum when uncalibrated) up to its 99.9th percentile; the title counts the
// clusters beyond.
func ClusterSpectrum(w io.Writer, c *pixel.Clusters, format string) error {
	return drawTallied(c, 0, func(t *clusterTally) error { return t.drawSpectrum(w, format) })
}

func (t *clusterTally) drawSpectrum(w io.Writer, format string) error {
	if t.n == 0 {
		return errNoClusters
	}
	xlabel, ylabel := "energy (keV)", "clusters per "+scaleLabel(t.binWidth, false)+" keV"
	if !t.calibrated {
		xlabel = "ToT sum (25 ns ticks)"
		ylabel = "clusters per " + scaleLabel(t.binWidth, false) + " ticks"
		if t.binWidth == 1 {
			ylabel = "clusters per tick"
		}
	}
	return histogram(w, t.spectrum, true, nil, fmt.Sprintf("%d clusters (%d above the range)", t.n, t.over), xlabel, ylabel, format)
}

// ClusterTime draws the number of clusters per time bin from the
// first cluster on.
func ClusterTime(w io.Writer, c *pixel.Clusters, format string) error {
	return drawTallied(c, 0, func(t *clusterTally) error { return t.drawTime(w, format) })
}

func (t *clusterTally) drawTime(w io.Writer, format string) error {
	if t.n == 0 {
		return errNoClusters
	}
	title := fmt.Sprintf("%d clusters in %s, bins of %s", t.n, seconds(t.span), seconds(t.span*1.0001/200))
	return histogram(w, t.times, false, nil, title, "time since the first cluster (s)", "clusters per bin", format)
}

// ClusterClasses draws the number of clusters of each morphology class
// (see pixel/analysis); the clusters must carry their morphology.
func ClusterClasses(w io.Writer, c *pixel.Clusters, format string) error {
	return drawTallied(c, 0, func(t *clusterTally) error { return t.drawClasses(w, format) })
}

func (t *clusterTally) drawClasses(w io.Writer, format string) error {
	if t.n == 0 || !t.shapes {
		return fmt.Errorf("no clusters with their morphology to plot (hitflow cluster --shapes)")
	}
	// A log scale: the rare classes are often the interesting ones.
	return histogram(w, t.classes, true, classTicks{}, fmt.Sprintf("%d clusters by morphology", t.n), "class", "clusters", format)
}

// Spectra of the time of flight (see pixel/analysis).
type Spectrum uint8

const (
	TOFSpectrum        Spectrum = iota // time of flight, ms
	EnergySpectrum                     // neutron energy, eV, on a log axis
	WavelengthSpectrum                 // neutron wavelength, Å
)

// TimeOfFlight draws a spectrum of the clusters' times of flight (the
// clusters before the first pulse left out): the times themselves, or
// the energies or wavelengths of neutrons over a flight path of path
// metres.
func TimeOfFlight(w io.Writer, c *pixel.Clusters, what Spectrum, path float64, format string) error {
	return drawTallied(c, path, func(t *clusterTally) error { return t.drawTOF(w, what, format) })
}

func (t *clusterTally) drawTOF(w io.Writer, what Spectrum, format string) error {
	h := t.tofHists[what]
	if h == nil {
		return fmt.Errorf("no clusters with a time of flight to plot (hitflow cluster --tof)")
	}
	title := fmt.Sprintf("%d clusters with a time of flight", t.tofs[what].n)
	switch what {
	case EnergySpectrum:
		return histogram(w, h, true, decadeTicks{}, title+fmt.Sprintf(", %g m", t.path), "neutron energy (eV)", "clusters per bin", format)
	case WavelengthSpectrum:
		return histogram(w, h, true, nil, title+fmt.Sprintf(", %g m", t.path), "neutron wavelength (Å)", "clusters per bin", format)
	}
	return histogram(w, h, true, nil, title, "time of flight (ms)", "clusters per bin", format)
}

// ClusterMap draws the centroids of the clusters on the sensor, one
// bin per pixel, with a colour bar: the clusters per pixel, on a log
// scale where they span two decades or more (a hot pixel's thousands
// would leave every other pixel the darkest colour).
func ClusterMap(w io.Writer, c *pixel.Clusters, width, height int, format string) error {
	if c.Len() == 0 {
		return errNoClusters
	}
	im, err := analysis.NewImage(width, height, 1, analysis.TOFBins{})
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := im.Fill(c); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return drawMap(w, im, int64(c.Len()), format)
}

func drawMap(w io.Writer, im *analysis.Image, n int64, format string) error {
	return CountImage(w, im.Sum(), im, fmt.Sprintf("cluster centroids per pixel%%s (%d clusters)", n), format)
}

// ClusterFigures name the overview figures of [WriteClusterFigures].
var ClusterFigures = []string{"size", "spectrum", "map", "time"}

// WriteClusterFigures writes the overview figures of clusters:
// PREFIX_size, PREFIX_spectrum, PREFIX_map and PREFIX_time; PREFIX_classes
// when the clusters carry their morphology, and PREFIX_examples when
// they carry their hits too; PREFIX_tof when they carry
// their time of flight, and with a flight path in metres PREFIX_energy
// and PREFIX_wavelength (of neutrons). The map is of a sensor of width x
// height pixels at least, grown to hold every cluster. The format is the
// extension; it returns the names.
func WriteClusterFigures(prefix string, c *pixel.Clusters, width, height int, flightPath float64, format string) ([]string, error) {
	o, err := NewOverview(scanOf(c), width, height, flightPath)
	if err != nil {
		return nil, err
	}
	o.c = c
	return o.Write(prefix, format)
}

// Overview is the overview figures of clusters (see WriteClusterFigures)
// with their bins filled, ready to draw.
type Overview struct {
	t *clusterTally
	c *pixel.Clusters // in memory, for the examples; nil when scanned
}

// NewOverview reads the clusters of scan three times over and fills the
// bins of their overview figures, in the memory of the figures, not of
// the clusters; there are no examples, which need the hits. (A pass more
// for each further 16 bits when over 2^20 spectrum values share the
// leading bits of the 99.9th percentile's: see rankSelect.)
func NewOverview(scan ClusterScan, width, height int, flightPath float64) (*Overview, error) {
	t, err := tallyClusters(scan, width, height, flightPath)
	if err == nil {
		err = t.fill(scan)
	}
	if err != nil {
		return nil, err
	}
	return &Overview{t: t}, nil
}

// Write draws the figures as PREFIX_NAME.FORMAT and returns the names.
func (o *Overview) Write(prefix, format string) ([]string, error) {
	t, c := o.t, o.c
	draw := map[string]func(io.Writer) error{
		"size":       func(w io.Writer) error { return t.drawSize(w, format) },
		"spectrum":   func(w io.Writer) error { return t.drawSpectrum(w, format) },
		"map":        func(w io.Writer) error { return drawMapOf(w, t, format) },
		"time":       func(w io.Writer) error { return t.drawTime(w, format) },
		"classes":    func(w io.Writer) error { return t.drawClasses(w, format) },
		"examples":   func(w io.Writer) error { return ClassExamples(w, c, format) },
		"tof":        func(w io.Writer) error { return t.drawTOF(w, TOFSpectrum, format) },
		"energy":     func(w io.Writer) error { return t.drawTOF(w, EnergySpectrum, format) },
		"wavelength": func(w io.Writer) error { return t.drawTOF(w, WavelengthSpectrum, format) },
	}
	figures := slices.Clip(ClusterFigures)
	if t.shapes && t.n > 0 {
		figures = append(figures, "classes")
		if c != nil && c.HasMembers() {
			figures = append(figures, "examples")
		}
	}
	if t.tofs[TOFSpectrum].n > 0 {
		figures = append(figures, "tof")
		if t.path > 0 {
			figures = append(figures, "energy", "wavelength")
		}
	}
	var names []string
	for _, fig := range figures {
		name := prefix + "_" + fig + "." + format
		if err := outfile.Write(name, draw[fig]); err != nil {
			return names, err
		}
		names = append(names, name)
	}
	return names, nil
}

// drawMapOf draws the map of a tally.
func drawMapOf(w io.Writer, t *clusterTally, format string) error {
	if t.n == 0 {
		return errNoClusters
	}
	return drawMap(w, t.image, t.n, format)
}
