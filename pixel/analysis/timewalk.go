package analysis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/internal/prefault"
	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
)

// TimeWalk is how late a hit is time-stamped against its ToT: a small
// signal crosses the discriminator's threshold later than a large one of
// the same arrival. Either the hyperbola dt(ToT) = A/(ToT-B) + C, dt in
// ns and ToT in 25 ns ticks, or, when Table is not empty, a delay per ToT
// (linear between the ToT values listed, flat beyond them).
type TimeWalk struct {
	A, B, C    float64
	AErr, BErr float64     // one standard deviation, from a fit; zero otherwise
	Table      []WalkPoint // by ToT, ascending
}

// WalkPoint is the delay of the hits of one ToT.
type WalkPoint struct {
	ToT     int
	Ns, Err float64 // the mean delay and its standard error
	Hits    int64   // hits measured
}

// validate checks that the model gives a finite delay for every ToT.
func (w *TimeWalk) validate() error {
	if len(w.Table) > 0 {
		for i, p := range w.Table {
			if math.IsNaN(p.Ns) || math.IsInf(p.Ns, 0) {
				return fmt.Errorf("the delay of ToT %d is %v", p.ToT, p.Ns)
			}
			if i > 0 && p.ToT <= w.Table[i-1].ToT {
				return fmt.Errorf("ToT %d after %d: the table must go up in ToT", p.ToT, w.Table[i-1].ToT)
			}
		}
		return nil
	}
	for _, v := range []float64{w.A, w.B, w.C} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("a, b and c must be finite numbers, not %v, %v, %v", w.A, w.B, w.C)
		}
	}
	return nil
}

// Delay is the time walk in ns of a hit of ToT tot ticks. Below the pole
// of the hyperbola, the delay of the smallest ToT above it.
func (w *TimeWalk) Delay(tot int) float64 {
	if t := w.Table; len(t) > 0 {
		i, found := slices.BinarySearchFunc(t, tot, func(p WalkPoint, tot int) int { return p.ToT - tot })
		switch {
		case found:
			return t[i].Ns
		case i == 0:
			return t[0].Ns
		case i == len(t):
			return t[len(t)-1].Ns
		}
		lo, hi := t[i-1], t[i]
		return lo.Ns + (hi.Ns-lo.Ns)*float64(tot-lo.ToT)/float64(hi.ToT-lo.ToT)
	}
	x := float64(tot)
	if x <= w.B {
		x = math.Floor(w.B) + 1
	}
	return w.A/(x-w.B) + w.C
}

// maxWalkNs bounds a time walk: a second is far beyond any detector's,
// and keeps the corrected times in range.
const maxWalkNs = 1e9

// WalkCorrection subtracts the time walk from hits' times: each ToT's
// delay, in whole units of pixel.Time, looked up.
type WalkCorrection struct {
	shift  []pixel.Time // by ToT, every uint16
	spread pixel.Time
}

// Correction prepares the correction of w.
func (w *TimeWalk) Correction() (*WalkCorrection, error) {
	if err := w.validate(); err != nil {
		return nil, fmt.Errorf("time walk: %w", err)
	}
	c := &WalkCorrection{shift: make([]pixel.Time, math.MaxUint16+1)}
	lo, hi := pixel.Time(math.MaxInt64), pixel.Time(math.MinInt64)
	for tot := range c.shift {
		d := w.Delay(tot)
		if math.Abs(d) > maxWalkNs {
			return nil, fmt.Errorf("time walk: %v ns at ToT %d is beyond ±1 s", d, tot)
		}
		s := pixel.TimeFromNs(d)
		c.shift[tot] = s
		lo, hi = min(lo, s), max(hi, s)
	}
	c.spread = hi - lo
	return c, nil
}

// Correct moves every hit of h earlier by its time walk.
func (c *WalkCorrection) Correct(h *pixel.Hits) {
	toa, tot := h.ToA, h.ToT[:len(h.ToA)]
	for i, t := range tot {
		toa[i] -= c.shift[t]
	}
}

// Spread is the most the correction moves one hit against another: a
// time-ordered stream is ordered within Spread after it.
func (c *WalkCorrection) Spread() pixel.Time { return c.spread }

// Walk sizes: by default clusters of MinWalkSize to MaxWalkSize hits
// measure the time walk. Single hits have no reference; large clusters
// are tracks whose hits arrive over a time of their own.
const (
	MinWalkSize = 2
	MaxWalkSize = 20
	maxWalkToT  = 1024 // Timepix3's ToT has 10 bits
)

// MaxWalkHits is the most hits a WalkSample keeps: beyond, it keeps a
// uniform random sample of them (8 bytes each), which measures the walk
// as well.
const MaxWalkHits = 1 << 23

// walkReservoir is MaxWalkHits, a variable for tests.
var walkReservoir = MaxWalkHits

// WalkSample gathers, for fitting a time walk, the delay of every hit
// behind the highest-ToT hit of its cluster (the reference), with the
// ToTs of both.
type WalkSample struct {
	minSize, maxSize int // the cluster sizes measured

	tot, ref []uint16
	delay    []int32 // pixel.Time
	seen     int64   // hits offered to the reservoir
	rng      *rand.Rand
	// Clusters and Hits measured (references not counted), and the hits
	// passed over: of clusters with a ToT above 1023, and delays beyond
	// ±33 ms (an int32 of pixel.Time).
	Clusters, Hits, Skipped int64
}

// NewWalkSample makes an empty sample of the clusters of MinWalkSize to
// MaxWalkSize hits.
func NewWalkSample() *WalkSample {
	return &WalkSample{minSize: MinWalkSize, maxSize: MaxWalkSize, rng: rand.New(rand.NewPCG(1, 2))}
}

// SetSizes measures the clusters of fewest to most hits from now on;
// fewest is 2 or more (a hit and its reference). Compact clusters only
// (2 to 4 hits) keep tracks out, whose hits arrive over the drift time
// along them.
func (s *WalkSample) SetSizes(fewest, most int) error {
	if fewest < MinWalkSize || most < fewest {
		return fmt.Errorf("cluster sizes %d to %d: want %d or more, the fewest first", fewest, most, MinWalkSize)
	}
	s.minSize, s.maxSize = fewest, most
	return nil
}

// Sizes are the sizes of the clusters measured, the fewest and the most
// hits.
func (s *WalkSample) Sizes() (fewest, most int) { return s.minSize, s.maxSize }

// Add measures the clusters of c of the sample's sizes, which must carry
// its members. The reference is the first of the highest-ToT hits.
func (s *WalkSample) Add(c *pixel.Clusters) error {
	if !c.HasMembers() {
		return pixel.ErrNoMembers
	}
	m := &c.Members
	// Room for the batch's hits at once, at least doubling: appended one
	// at a time, the reservoir's columns were copied into fresh memory,
	// a page fault at a time, which took half of a fit's time.
	if room := min(walkReservoir-len(s.delay), max(m.Len(), len(s.delay))); room > 0 && cap(s.delay)-len(s.delay) < m.Len() {
		s.tot, s.ref, s.delay = prefault.Grow(s.tot, room), prefault.Grow(s.ref, room), prefault.Grow(s.delay, room)
	}
	for i := range c.Len() {
		lo, hi := c.Start[i], c.Start[i+1]
		if int(hi-lo) < s.minSize || int(hi-lo) > s.maxSize {
			continue
		}
		ref := lo
		for j := lo; j < hi; j++ {
			if m.ToT[j] > m.ToT[ref] {
				ref = j
			}
		}
		if m.ToT[ref] >= maxWalkToT {
			s.Skipped += int64(hi - lo - 1)
			continue
		}
		s.Clusters++
		for j := lo; j < hi; j++ {
			d := m.ToA[j] - m.ToA[ref]
			switch {
			case j == ref:
			case d < math.MinInt32 || d > math.MaxInt32:
				s.Skipped++
			default:
				s.Hits++
				s.keep(m.ToT[j], m.ToT[ref], int32(d))
			}
		}
	}
	return nil
}

// keep puts a hit in the reservoir: every hit offered so far has had the
// same chance to be in it.
func (s *WalkSample) keep(tot, ref uint16, d int32) {
	s.seen++
	if len(s.delay) < walkReservoir {
		s.tot, s.ref, s.delay = append(s.tot, tot), append(s.ref, ref), append(s.delay, d)
		return
	}
	if k := s.rng.Int64N(s.seen); k < int64(walkReservoir) {
		s.tot[k], s.ref[k], s.delay[k] = tot, ref, d
	}
}

// walkBin is the hits of one pair of ToTs, of a hit and its reference.
type walkBin struct {
	x, r   float64 // the ToTs
	n      float64
	s1, s2 float64 // the sums of the delays (ns) and of their squares
}

// bins sums the kept hits (all when keep is nil) by their pair of ToTs;
// at is a dense index of the pairs (both ToTs are below maxWalkToT),
// maxWalkToT^2 long, cleared here.
func (s *WalkSample) bins(keep []bool, at []int32) []walkBin {
	clear(at)
	var bins []walkBin
	for i, d := range s.delay {
		if keep != nil && !keep[i] {
			continue
		}
		k := int(s.tot[i])*maxWalkToT + int(s.ref[i])
		if at[k] == 0 {
			bins = append(bins, walkBin{x: float64(s.tot[i]), r: float64(s.ref[i])})
			at[k] = int32(len(bins))
		}
		ns := pixel.Time(d).Ns()
		b := &bins[at[k]-1]
		b.n++
		b.s1 += ns
		b.s2 += ns * ns
	}
	return bins
}

// WalkFit is the result of a fit.
type WalkFit struct {
	Hyperbola TimeWalk    // A, B and their errors; C is 0
	Table     []WalkPoint // the measured delay by ToT (see WalkSample.Fit)
	// Hits fitted, among them the outliers left out, and the clusters
	// they came from.
	Hits, Outliers, Clusters int64
	RMS                      float64 // ns: the spread of the fitted hits' delays about the fit
}

// ErrFewWalkHits is the error of fitting a sample with too little in it.
var ErrFewWalkHits = errors.New("too few clusters of the sizes measured with different ToTs to fit a time walk")

// outlierCut is how many robust standard deviations from the fit make a
// delay an outlier: a hit of another particle piled up in the cluster, a
// delta electron.
const outlierCut = 6

// Fit fits the hyperbola to the sample. The delays are differences of
// two hits' walks, dt(ToT) - dt(ToT of the reference), so Fit minimises
// the squares of the hits' delays less that difference: a common offset
// cancels and C cannot be measured from the clusters alone; it is 0, the
// walk vanishing for large signals. A is found in closed form for each
// B, and B by a scan then a golden-section search below the smallest
// ToT; the errors come from the curvature of the sum of squares. Hits
// further than 6 robust standard deviations (from the median absolute
// deviation) from the fit are left out and the fit repeated until none
// is. The table is, for each ToT, the mean delay of its hits plus the
// fitted walk of their references, which the delays lack.
func (s *WalkSample) Fit() (WalkFit, error) {
	res := WalkFit{Clusters: s.Clusters}
	keep := make([]bool, len(s.delay))
	for i := range keep {
		keep[i] = true
	}
	var w TimeWalk
	var bins []walkBin
	at, residuals := make([]int32, maxWalkToT*maxWalkToT), make([]float64, len(s.delay))
	sample := make([]float64, 0, len(s.delay)/max(1, len(s.delay)>>20)+1)
	for range 20 {
		bins = s.bins(keep, at)
		var err error
		if w, err = fitHyperbola(bins); err != nil {
			return res, err
		}
		if !s.trim(&w, keep, residuals, &sample) {
			break
		}
	}
	res.Hyperbola = w
	var r float64
	for _, b := range bins {
		res.Hits += int64(b.n)
		m := w.A * (1/(b.x-w.B) - 1/(b.r-w.B))
		r += b.s2 - 2*m*b.s1 + b.n*m*m
	}
	res.Outliers = int64(len(s.delay)) - res.Hits
	sigma2 := max(r, 0) / float64(res.Hits-2)
	res.RMS = math.Sqrt(sigma2)
	// The Fisher matrix of (A, B) on the hits' delays.
	var faa, fab, fbb float64
	for _, b := range bins {
		g := 1/(b.x-w.B) - 1/(b.r-w.B)
		h := w.A * (1/((b.x-w.B)*(b.x-w.B)) - 1/((b.r-w.B)*(b.r-w.B)))
		faa += b.n * g * g
		fab += b.n * g * h
		fbb += b.n * h * h
	}
	if det := faa*fbb - fab*fab; det > 0 {
		res.Hyperbola.AErr, res.Hyperbola.BErr = math.Sqrt(sigma2*fbb/det), math.Sqrt(sigma2*faa/det)
	}
	res.Table = walkTable(bins, &res.Hyperbola)
	return res, nil
}

// trim marks the outliers of the fit w as not kept, and says whether
// that changed anything; res takes the residuals, buf (reused) an evenly
// spread sample of them.
func (s *WalkSample) trim(w *TimeWalk, keep []bool, res []float64, buf *[]float64) bool {
	for i, d := range s.delay {
		x, r := float64(s.tot[i]), float64(s.ref[i])
		res[i] = pixel.Time(d).Ns() - w.A*(1/(x-w.B)-1/(r-w.B))
	}
	// The median and the median absolute deviation of an evenly spread
	// sample of at most 2^20 residuals: as good an estimate, without
	// sorting millions twice a round.
	step := max(1, len(res)>>20)
	sample := (*buf)[:0]
	for i := 0; i < len(res); i += step {
		sample = append(sample, res[i])
	}
	*buf = sample
	slices.Sort(sample)
	median := sample[len(sample)/2]
	for i, v := range sample {
		sample[i] = math.Abs(v - median)
	}
	slices.Sort(sample)
	// The grid of the ToA is 1.5625 ns: no tighter than that.
	cut := outlierCut * max(1.4826*sample[len(sample)/2], 1.5625)
	changed := false
	for i, v := range res {
		k := math.Abs(v-median) <= cut
		changed = changed || k != keep[i]
		keep[i] = k
	}
	return changed
}

// fitHyperbola fits A and B to the bins (see WalkSample.Fit).
func fitHyperbola(bins []walkBin) (TimeWalk, error) {
	xmin, spread, n := math.Inf(1), false, 0.0
	for _, b := range bins {
		xmin = min(xmin, b.x)
		spread = spread || b.x != b.r
		n += b.n
	}
	if !spread || n < 3 {
		return TimeWalk{}, ErrFewWalkHits
	}
	// b = xmin - e^u: every B below the smallest ToT, spread over scales.
	pole := func(u float64) float64 { return xmin - math.Exp(u) }
	rss := func(u float64) float64 { _, r := walkA(bins, pole(u)); return r }
	const lo, hi, steps = -7.0, 10.0, 400
	best, bestR := lo, math.Inf(1)
	for i := range steps + 1 {
		u := lo + (hi-lo)*float64(i)/steps
		if r := rss(u); r < bestR {
			best, bestR = u, r
		}
	}
	w := TimeWalk{B: pole(goldenMin(rss, best-(hi-lo)/steps, best+(hi-lo)/steps))}
	w.A, _ = walkA(bins, w.B)
	return w, nil
}

// walkA is the A that fits the bins best for pole b, and the sum of the
// squares of the hits' residuals with it.
func walkA(bins []walkBin, b float64) (a, rss float64) {
	var sgd, sgg float64
	for _, k := range bins {
		g := 1/(k.x-b) - 1/(k.r-b)
		sgd += g * k.s1
		sgg += k.n * g * g
	}
	if sgg > 0 {
		a = sgd / sgg
	}
	for _, k := range bins {
		m := a * (1/(k.x-b) - 1/(k.r-b))
		rss += k.s2 - 2*m*k.s1 + k.n*m*m
	}
	return a, max(rss, 0)
}

// goldenMin finds a minimum of f between lo and hi.
func goldenMin(f func(float64) float64, lo, hi float64) float64 {
	const g = 0.6180339887498949
	a, b := lo, hi
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd := f(c), f(d)
	for range 100 {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = f(d)
		}
	}
	return (a + b) / 2
}

// walkTable is the mean delay of each ToT's hits in the bins, each delay
// plus the walk of its reference by model.
func walkTable(bins []walkBin, model *TimeWalk) []WalkPoint {
	type sums struct{ n, s1, s2 float64 }
	by := make(map[int]*sums)
	for _, b := range bins {
		x := int(b.x)
		if by[x] == nil {
			by[x] = &sums{}
		}
		shift := model.Delay(int(b.r))
		t := by[x]
		t.n += b.n
		t.s1 += b.s1 + b.n*shift
		t.s2 += b.s2 + 2*shift*b.s1 + b.n*shift*shift
	}
	var pts []WalkPoint
	for x, t := range by {
		mean := t.s1 / t.n
		p := WalkPoint{ToT: x, Ns: mean, Hits: int64(t.n)}
		if t.n > 1 {
			p.Err = math.Sqrt(max(t.s2/t.n-mean*mean, 0) / (t.n - 1))
		}
		pts = append(pts, p)
	}
	slices.SortFunc(pts, func(a, b WalkPoint) int { return a.ToT - b.ToT })
	return pts
}

// WriteTimeWalk writes w as ReadTimeWalk reads it, after the comment
// lines of comment.
func WriteTimeWalk(out io.Writer, comment string, w TimeWalk) error {
	bw := bufio.NewWriter(out)
	for line := range strings.SplitSeq(comment, "\n") {
		fmt.Fprintf(bw, "# %s\n", line)
	}
	if len(w.Table) > 0 {
		fmt.Fprintln(bw, "model table")
		fmt.Fprintln(bw, "# tot ToT(25ns ticks) delay(ns) error(ns) hits")
		for _, p := range w.Table {
			fmt.Fprintf(bw, "tot %d %s %s %d\n", p.ToT, g17(p.Ns), g17(p.Err), p.Hits)
		}
	} else {
		fmt.Fprintln(bw, "model hyperbola")
		fmt.Fprintln(bw, "# dt(ns) = a / (ToT - b) + c, ToT in 25 ns ticks; value and error")
		fmt.Fprintf(bw, "a %s %s\nb %s %s\nc %s\n", g17(w.A), g17(w.AErr), g17(w.B), g17(w.BErr), g17(w.C))
	}
	return bw.Flush()
}

// excerpt quotes the start of a line for an error: a binary file given
// by mistake has long ones.
func excerpt(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "..."
	}
	return strconv.Quote(s)
}

func g17(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// ReadTimeWalk reads a time walk written by WriteTimeWalk (or by hand):
// "model hyperbola" with lines "a VALUE [ERROR]", "b ..." and "c ..."
// (c 0 unless given), or "model table" with lines "tot TOT DELAY_NS
// [ERROR [HITS]]"; # starts a comment. name is for errors.
func ReadTimeWalk(r io.Reader, name string) (TimeWalk, error) {
	var w TimeWalk
	model := ""
	seen := map[string]bool{}
	sc := textscan.New(r, name, "timewalk")
	fail := func(format string, args ...any) (TimeWalk, error) {
		return TimeWalk{}, sc.Errorf(format, args...)
	}
	for line := range sc.Lines() {
		text, _, _ := strings.Cut(string(line), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if model == "" {
			if len(f) != 2 || f[0] != "model" || f[1] != "hyperbola" && f[1] != "table" {
				return fail("want \"model hyperbola\" or \"model table\" first, got %s", excerpt(string(line)))
			}
			model = f[1]
			continue
		}
		nums := make([]float64, len(f)-1)
		for i, s := range f[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return fail("%s is not a finite number", excerpt(s))
			}
			nums[i] = v
		}
		switch {
		case model == "table" && f[0] == "tot" && len(nums) >= 2 && len(nums) <= 4:
			p := WalkPoint{ToT: int(nums[0]), Ns: nums[1]}
			if nums[0] != math.Trunc(nums[0]) || nums[0] < 0 || nums[0] > math.MaxUint16 {
				return fail("ToT %v is not a whole number of ticks from 0 to 65535", nums[0])
			}
			if len(w.Table) > 0 && p.ToT <= w.Table[len(w.Table)-1].ToT {
				return fail("ToT %d after %d: the table must go up in ToT", p.ToT, w.Table[len(w.Table)-1].ToT)
			}
			if len(nums) > 2 {
				p.Err = nums[2]
			}
			if len(nums) > 3 {
				p.Hits = int64(nums[3])
			}
			w.Table = append(w.Table, p)
		case model == "hyperbola" && (f[0] == "a" || f[0] == "b" || f[0] == "c") && len(nums) >= 1 && len(nums) <= 2:
			if seen[f[0]] {
				return fail("%s given twice", f[0])
			}
			seen[f[0]] = true
			v, e := nums[0], 0.0
			if len(nums) == 2 {
				e = nums[1]
			}
			switch f[0] {
			case "a":
				w.A, w.AErr = v, e
			case "b":
				w.B, w.BErr = v, e
			default:
				w.C = v
			}
		case model == "table":
			return fail("want \"tot TOT DELAY_NS [ERROR [HITS]]\", got %s", excerpt(string(line)))
		default:
			return fail("want \"a|b|c VALUE [ERROR]\", got %s", excerpt(string(line)))
		}
	}
	if err := sc.Err(); err != nil {
		return TimeWalk{}, err
	}
	switch {
	case model == "":
		return TimeWalk{}, fmt.Errorf("timewalk: %s: no \"model\" line: not a time-walk file", name)
	case model == "table" && len(w.Table) == 0:
		return TimeWalk{}, fmt.Errorf("timewalk: %s: a table without \"tot\" lines", name)
	case model == "hyperbola" && (!seen["a"] || !seen["b"]):
		return TimeWalk{}, fmt.Errorf("timewalk: %s: the hyperbola needs both a and b", name)
	}
	return w, nil
}
