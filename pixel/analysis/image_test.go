package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// refBin finds by search the bin of a centroid and a time of flight:
// the i with i/scale - 0.5 <= v < (i+1)/scale - 0.5, and the k with
// k*span <= (t-min)*n < (k+1)*span; -1 when there is none.
func refBin(v float64, scale, bins int) int {
	for i := range bins {
		if float64(i)/float64(scale)-0.5 <= v && v < float64(i+1)/float64(scale)-0.5 {
			return i
		}
	}
	return -1
}

func refTOF(t pixel.Time, b TOFBins) int {
	for k := range b.N {
		d := int64(t-b.Min) * int64(b.N)
		if int64(k)*int64(b.Max-b.Min) <= d && d < int64(k+1)*int64(b.Max-b.Min) {
			return k
		}
	}
	return -1
}

// TestImageAgainstSearch fills random clusters (centroids on and off
// bin edges, outside the sensor, NaN; times on bin edges, before the
// first pulse) and compares every count with bins found by search.
func TestImageAgainstSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 2000 {
		w, h, scale, planes := 1+r.IntN(9), 1+r.IntN(9), 1+r.IntN(8), 7
		if trial%10 == 0 { // an image of many of Fill's regions
			w, h, planes = 100+r.IntN(100), 50+r.IntN(50), 3
		}
		tof := TOFBins{}
		if trial%2 == 1 {
			tof = TOFBins{Min: pixel.Time(r.IntN(50)), N: 1 + r.IntN(planes)}
			tof.Max = tof.Min + pixel.Time(1+r.IntN(300))
		}
		im, err := NewImage(w, h, scale, tof)
		if err != nil {
			t.Fatal(err)
		}
		c := &pixel.Clusters{}
		n := 1 + r.IntN(300)
		if trial%100 == 5 { // more than Fill takes at a time
			n = 2*fillSlice + r.IntN(3*fillSlice)
		}
		for range n {
			coord := func(size int) float64 {
				switch r.IntN(6) {
				case 0: // a bin edge
					return float64(r.IntN(size*scale+2)-1)/float64(scale) - 0.5
				case 1:
					return math.NaN()
				}
				return r.Float64()*float64(size+2) - 1.5
			}
			c.X, c.Y = append(c.X, coord(w)), append(c.Y, coord(h))
			c.ID = append(c.ID, int64(len(c.ID)))
			pulse, tt := int64(r.IntN(5))-1, pixel.Time(0)
			if tof.N > 0 {
				if r.IntN(3) == 0 { // a bin edge
					tt = tof.Min + pixel.Time(int64(r.IntN(tof.N+2)-1)*int64(tof.Max-tof.Min)/int64(tof.N))
				} else {
					tt = pixel.Time(r.IntN(int(tof.Max) + 60))
				}
			}
			if pulse < 0 {
				tt = 0
			}
			c.TOF, c.Pulse = append(c.TOF, tt), append(c.Pulse, pulse)
		}
		// Two batches: counts add up.
		half := *c
		half.ID, half.X, half.Y, half.TOF, half.Pulse = c.ID[:n/2], c.X[:n/2], c.Y[:n/2], c.TOF[:n/2], c.Pulse[:n/2]
		rest := *c
		rest.ID, rest.X, rest.Y, rest.TOF, rest.Pulse = c.ID[n/2:], c.X[n/2:], c.Y[n/2:], c.TOF[n/2:], c.Pulse[n/2:]
		if err := im.Fill(&half); err != nil {
			t.Fatal(err)
		}
		if err := im.Fill(&rest); err != nil {
			t.Fatal(err)
		}
		want := make([]uint32, len(im.Counts))
		var outside, noPulse, outTOF int64
		for i := range n {
			x, y := refBin(c.X[i], scale, w*scale), refBin(c.Y[i], scale, h*scale)
			if x < 0 || y < 0 {
				outside++
				continue
			}
			k := 0
			if tof.N > 0 {
				if c.Pulse[i] < 0 {
					noPulse++
					continue
				}
				if k = refTOF(c.TOF[i], tof); k < 0 {
					outTOF++
					continue
				}
			}
			want[(k*h*scale+y)*w*scale+x]++
		}
		if !slices.Equal(im.Counts, want) || im.Outside != outside || im.NoPulse != noPulse || im.OutOfTOF != outTOF || im.Counted+outside+noPulse+outTOF != int64(n) {
			t.Fatalf("trial %d (%dx%d scale %d, %+v): counts differ from the search, or outside %d/%d, no pulse %d/%d, out of tof %d/%d",
				trial, w, h, scale, tof, im.Outside, outside, im.NoPulse, noPulse, im.OutOfTOF, outTOF)
		}
		var total uint64
		for _, v := range im.Sum() {
			total += v
		}
		if total != uint64(im.Counted) {
			t.Fatalf("sum %d, counted %d", total, im.Counted)
		}
	}
}

func TestImageByHand(t *testing.T) {
	im, err := NewImage(2, 2, 2, TOFBins{Min: 0, Max: 100 * pixel.Nanosecond, N: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := &pixel.Clusters{
		X: []float64{0, 0.25, 1.4, -0.5, 1.5}, Y: []float64{0, 0, 1, 0, 0},
		TOF: []pixel.Time{10 * pixel.Nanosecond, 50 * pixel.Nanosecond, 99 * pixel.Nanosecond, 0, 0}, Pulse: []int64{0, 3, 1, 0, 0},
	}
	c.ID = make([]int64, 5)
	if err := im.Fill(c); err != nil {
		t.Fatal(err)
	}
	// (0,0) -> bin (1,1) of tof bin 0; (0.25,0) -> bin (1,1) of bin 1
	// (50 ns starts it); (1.4,1) -> bin (3,3) of bin 1; -0.5 is the
	// sensor's edge: bin 0; 1.5 is past it.
	want := make([]uint32, 32)
	want[1*4+1], want[16+1*4+1], want[16+3*4+3], want[1*4+0] = 1, 1, 1, 1
	if !slices.Equal(im.Counts, want) || im.Outside != 1 || im.Counted != 4 {
		t.Errorf("counts %v, outside %d", im.Counts, im.Outside)
	}
	if err := im.Fill(&pixel.Clusters{ID: []int64{0}, X: []float64{0}, Y: []float64{0}}); err != ErrNoTOF {
		t.Errorf("clusters without tof: %v", err)
	}
}

func TestImageLimits(t *testing.T) {
	for _, c := range []struct {
		w, h, scale int
		tof         TOFBins
		want        string
	}{
		{0, 256, 1, TOFBins{}, "sensor"},
		{256, 256, 0, TOFBins{}, "scale 0"},
		{256, 256, 257, TOFBins{}, "scale 257"},
		{256, 256, 8, TOFBins{Max: 1, N: 300}, "more than 1073741824"},
		{256, 256, 1, TOFBins{Min: 5, Max: 5, N: 3}, "Max above Min"},
	} {
		if _, err := NewImage(c.w, c.h, c.scale, c.tof); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for s, want := range map[string]TOFBins{"0:20ms:1000": {0, 20 * pixel.Millisecond, 1000}, "1us:2us:1": {pixel.Microsecond, 2 * pixel.Microsecond, 1}} {
		if got, err := ParseTOFBins(s); err != nil || got != want {
			t.Errorf("%s: %+v %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "0:1ms", "1ms:0:5", "0:1ms:0", "0:1ms:5x", "a:1ms:5", "0:1ms:5:6"} {
		if _, err := ParseTOFBins(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
