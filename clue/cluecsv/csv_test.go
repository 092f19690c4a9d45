package cluecsv

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/internal/textparts"
)

func TestReadWriteRoundTrip(t *testing.T) {
	in := "x0,x1,layer,weight\n1.5,2,0,1\n-3,4.25,2,0.5\n"
	tab, err := Read(strings.NewReader(in), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	if tab.Points.Len() != 2 || tab.Points.Coords[1][1] != 4.25 || tab.Points.Layer[1] != 2 || tab.Points.Weight[1] != 0.5 {
		t.Fatalf("%+v", tab)
	}
	r, err := clue.Run(&tab.Points, clue.Params{DC: 1, RhoC: 0.7, DeltaC: 1, DeltaO: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, tab, r); err != nil {
		t.Fatal(err)
	}
	want := "x0,x1,layer,weight,rho,delta,nh,isSeed,clusterId\n1.5,2,0,1,1,inf,-1,1,0\n-3,4.25,2,0.5,0.5,inf,-1,0,-1\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
	back, err := Read(&out, "out.csv")
	if err != nil || back.Points.Len() != 2 || back.Points.Coords[0][1] != -3 {
		t.Fatalf("reading the output back: %v", err)
	}
}

// TestEvents: an event column is read, clusters are numbered within
// each event, and the column is written back before the layer's.
func TestEvents(t *testing.T) {
	in := "weight,event,x,y,layer\n1,7,0,0,1\n1,7,0.5,0,1\n1,-3,0,0,1\n1,-3,0.5,0,1\n"
	tab, err := Read(strings.NewReader(in), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !tab.Event || tab.Points.Event[2] != -3 {
		t.Fatalf("%+v", tab)
	}
	r, err := clue.Run(&tab.Points, clue.Params{DC: 1, RhoC: 1, DeltaC: 1, DeltaO: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, tab, r); err != nil {
		t.Fatal(err)
	}
	want := "x,y,event,layer,weight,rho,delta,nh,isSeed,clusterId\n" +
		"0,0,7,1,1,2,0.5,1,0,0\n0.5,0,7,1,1,2,inf,-1,1,0\n0,0,-3,1,1,2,0.5,3,0,0\n0.5,0,-3,1,1,2,inf,-1,1,0\n"
	if out.String() != want || r.Clusters != 2 {
		t.Fatalf("%d clusters; got\n%s\nwant\n%s", r.Clusters, out.String(), want)
	}
	if _, err := Read(strings.NewReader("x,y,event,weight\n1,2,1.5,1\n"), "bad.csv"); err == nil || !strings.Contains(err.Error(), `event "1.5" is not an integer`) {
		t.Errorf("a fractional event: %v", err)
	}
}

func TestHeaderless(t *testing.T) {
	tab, err := Read(strings.NewReader("1,2,3,4\n5,6,7,8\n"), "h.csv")
	if err != nil || !tab.Layer || tab.Points.Layer[1] != 7 || tab.Points.Weight[0] != 4 || strings.Join(tab.Coords, ",") != "x,y" {
		t.Fatalf("%v %+v", err, tab)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"x,y\n1,2\n", "line 1: header \"x,y\" has no weight column"},
		{"x,y,energy,weight\n", `line 1: unknown column "energy"`},
		{"x,y,weight\n1,2,3\n1,nan,1\n", "line 3: coordinate y = \"nan\" is not a finite number"},
		{"x,y,weight\n1,2,-1\n", "line 2: weight \"-1\" is not a finite number >= 0"},
		{"x,y,weight\n1,2\n", "line 2: 2 fields, want 3"},
		{"x,y,layer,weight\n1,2,1.5,1\n", `line 2: layer "1.5" is not an integer`},
		{"1,2,3\n", "line 1: no header and 3 columns"},
		{"", "no header and no points"},
		// A binary file read as CSV: the column quoted is cut short.
		{strings.Repeat("\xf6q", 500) + ",weight\n", `line 1: unknown column "` + strings.Repeat(`\xf6q`, 20) + `" (want`},
	} {
		_, err := Read(strings.NewReader(tc.in), "bad.csv")
		if err == nil || !strings.Contains(err.Error(), "bad.csv: "+tc.want) && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte("x0,x1,weight\n1,2,1\n"))
	f.Add([]byte("x,y,z,layer,weight\n1,2,3,4,5\n"))
	f.Add([]byte("1,2,3,4\n"))
	f.Add([]byte("\xef\xbb\xbf\"x\",\"y\",weight\n1,2,1\r\n# c\n\n3,\"4\",5\n7,8"))
	f.Add([]byte("x,y,weight\n1,2,1\n1,2\n1,2,-1\n"))
	f.Add([]byte("x,y,layer,weight,rho,delta\n1,2,3.0,1,\"5,6\",inf\n-1.5,+2,-0,0.25,1,2\n1,2,3,1,\"5,6\"\n"))
	f.Add([]byte("event,x,layer,weight,isSeed\n7,1e3,2147483648,1,1\n7, 1,2,1,1\n8,1,2,-0,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Read(bytes.NewReader(data), "fuzz")
		// Parsed in blocks of a few bytes on three goroutines, the same
		// table or the same error as in one piece on one.
		// Parsed without the fast path of the common form, the same too.
		tab1, err1 := read(bytes.NewReader(data), "fuzz", 1<<20, 1, true)
		tab3, err3 := read(bytes.NewReader(data), "fuzz", 1+len(data)%13, 3, false)
		if fmt.Sprint(err1) != fmt.Sprint(err3) || fmt.Sprint(err) != fmt.Sprint(err1) {
			t.Fatalf("errors differ: %v / %v / %v", err, err1, err3)
		}
		if err == nil && (!reflect.DeepEqual(tab1, tab3) || !reflect.DeepEqual(tab, tab1)) {
			t.Fatalf("tables differ:\n%+v\n%+v", tab1, tab3)
		}
		if err != nil {
			return
		}
		if err := tab.Points.Validate(); err != nil {
			t.Fatalf("accepted invalid points: %v", err)
		}
		if tab.Points.Len() > 0 && tab.Points.Len() < 200 {
			if _, err := clue.Run(&tab.Points, clue.Params{DC: 1, RhoC: 1, DeltaC: 1, DeltaO: 2}, 2); err != nil && !strings.Contains(err.Error(), "tile") {
				t.Fatalf("clustering accepted points: %v", err)
			}
		}
	})
}

// golden pins the clusters and outliers found when this test was written,
// so that any change of behaviour shows.
var golden = map[string][2]int{
	"aniso_1000": {6, 72}, "blob": {4, 0}, "data_1024": {20, 115}, "data_16384": {20, 1595},
	"data_4096": {20, 413}, "data_65536": {20, 6318}, "sissa_1000": {9, 119}, "sissa_4000": {14, 189},
	"toyDetector_1000": {95, 54}, "toyDetector_10000": {632, 137}, "toyDetector_5000": {373, 145},
}

// TestSharedDatasets runs every file of ../shared/data/clue with the
// parameters its reference outputs were made with and checks the results
// are sane: seeds and clusters found, every cluster contains its seed,
// outliers have low density.
func TestSharedDatasets(t *testing.T) {
	dir := "../../../shared/data/clue"
	params := map[string][3]float64{ // dc, rhoc, dm
		"sissa_1000": {21, 10, 21}, "sissa_4000": {20, 10, 20}, "toyDetector_1000": {4, 2.5, 4},
		"toyDetector_5000": {2.5, 2, 7.5}, "toyDetector_10000": {2.5, 2, 7.5}, "blob": {1, 5, 2},
		"aniso_1000": {25, 5, 23}, "data_1024": {1.3, 10, 1.3}, "data_4096": {1.3, 10, 1.3},
		"data_16384": {1.3, 10, 1.3}, "data_65536": {1.3, 10, 1.3},
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(files) == 0 {
		t.Skipf("shared data %s not present; skipping", dir)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".csv")
		ps, ok := params[name]
		if !ok {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Read(fh, f)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := clue.Params{DC: ps[0], RhoC: ps[1], DeltaC: ps[2], DeltaO: ps[2]}
		r, err := clue.Run(&tab.Points, p, 2)
		if err != nil {
			t.Fatal(err)
		}
		if r.Clusters == 0 || r.Outliers == tab.Points.Len() {
			t.Errorf("%s: %d clusters, %d outliers", name, r.Clusters, r.Outliers)
		}
		for i, id := range r.ClusterID {
			if r.IsSeed[i] && id < 0 {
				t.Errorf("%s: seed %d without cluster", name, i)
			}
			if id < 0 && r.Rho[i] >= p.RhoC && math.IsInf(r.Delta[i], 1) {
				t.Errorf("%s: dense isolated point %d is an outlier", name, i)
			}
		}
		t.Logf("%-18s %6d points: %4d clusters, %5d outliers", name, tab.Points.Len(), r.Clusters, r.Outliers)
		if g := golden[name]; r.Clusters != g[0] || r.Outliers != g[1] {
			t.Errorf("%s: %d clusters and %d outliers, before %d and %d", name, r.Clusters, r.Outliers, g[0], g[1])
		}
	}
}

// TestBlocksAndParts: a file with comment and blank lines anywhere reads
// as the points written, whatever the block size and the number of parts,
// each part's rows closed up behind the rows of the parts before.
func TestBlocksAndParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	var text strings.Builder
	text.WriteString("x,y,layer,weight\r\n")
	var want clue.Points
	want.Coords = make([][]float64, 2)
	for i := range 2000 {
		switch rng.IntN(5) {
		case 0:
			text.WriteString("# a comment\n")
		case 1:
			text.WriteString(" \r\n")
		}
		x, y, l, w := rng.NormFloat64()*100, float64(i)/7, int32(rng.IntN(50)), float64(rng.IntN(4))
		fmt.Fprintf(&text, "%v,%v,%d,%v\n", x, y, l, w)
		want.Coords[0], want.Coords[1] = append(want.Coords[0], x), append(want.Coords[1], y)
		want.Layer, want.Weight = append(want.Layer, l), append(want.Weight, w)
	}
	for _, block := range []int{1, 50, 333, 4096, 1 << 20} {
		for _, workers := range []int{1, 2, 3, 7} {
			tab, err := read(strings.NewReader(text.String()), "b.csv", block, workers, workers%2 == 1)
			if err != nil {
				t.Fatalf("block %d, %d parts: %v", block, workers, err)
			}
			if !reflect.DeepEqual(tab.Points, want) {
				t.Fatalf("block %d, %d parts: %d points, not the %d written", block, workers, tab.Points.Len(), want.Len())
			}
		}
	}
}

// TestCoordNames: isCoord takes the names the header's grammar gives,
// checked against that grammar as a regular expression on every string of
// up to four bytes from the bytes that matter, and on a few longer ones.
func TestCoordNames(t *testing.T) {
	grammar := regexp.MustCompile(`^(x|y|z|x[0-9]+)$`)
	alphabet := []byte("xyz09a/:-")
	var names []string
	var grow func(prefix []byte)
	grow = func(prefix []byte) {
		names = append(names, string(prefix))
		if len(prefix) == 4 {
			return
		}
		for _, c := range alphabet {
			grow(append(prefix, c))
		}
	}
	grow(nil)
	names = append(names, "x1234567890", "x123456789y", "weight", "layer", "xx0")
	for _, n := range names {
		if got, want := isCoord(n), grammar.MatchString(n); got != want {
			t.Errorf("isCoord(%q) = %v, want %v", n, got, want)
		}
	}
}

// TestWriteMatchesStrconv: Write's rows are those of strconv's shortest
// floats and plain integers, for tables of one to nine coordinates with
// and without events and layers, with values of every length (the
// longest floats, the extreme integers), in parts on several cores.
func TestWriteMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	float := func() float64 {
		switch r.IntN(5) {
		case 0:
			return -math.Float64frombits(1<<52 | r.Uint64N(1<<52)) // about -2.2e-308, 24 bytes
		case 1:
			return float64(r.IntN(2000000) - 1000000)
		case 2:
			return math.Float64frombits(r.Uint64N(0x7FF0000000000000))
		default:
			return r.Float64()*400 - 200
		}
	}
	integer := func() int32 { return []int32{math.MinInt32, math.MaxInt32, -1, 0, int32(r.Uint32())}[r.IntN(5)] }
	for _, dims := range []int{1, 2, 9} {
		for _, extra := range []bool{false, true} {
			n := 3*textparts.MinRows + r.IntN(100)
			tab := &Table{Event: extra, Layer: extra, Points: clue.Points{Coords: make([][]float64, dims), Weight: make([]float64, n)}}
			res := &clue.Result{Rho: make([]float64, n), Delta: make([]float64, n), NH: make([]int32, n), IsSeed: make([]bool, n), ClusterID: make([]int32, n)}
			for d := range dims {
				tab.Coords = append(tab.Coords, fmt.Sprintf("x%d", d))
				tab.Points.Coords[d] = make([]float64, n)
			}
			if extra {
				tab.Points.Event, tab.Points.Layer = make([]int32, n), make([]int32, n)
			}
			var want strings.Builder
			want.WriteString(strings.Join(tab.Coords, ","))
			if extra {
				want.WriteString(",event,layer")
			}
			want.WriteString(",weight,rho,delta,nh,isSeed,clusterId\n")
			g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
			for i := range n {
				for d := range dims {
					tab.Points.Coords[d][i] = float()
					want.WriteString(g(tab.Points.Coords[d][i]) + ",")
				}
				if extra {
					tab.Points.Event[i], tab.Points.Layer[i] = integer(), integer()
					fmt.Fprintf(&want, "%d,%d,", tab.Points.Event[i], tab.Points.Layer[i])
				}
				tab.Points.Weight[i], res.Rho[i], res.Delta[i] = math.Abs(float()), math.Abs(float()), math.Abs(float())
				delta := g(res.Delta[i])
				if r.IntN(4) == 0 {
					res.Delta[i], delta = math.Inf(1), "inf"
				}
				res.NH[i], res.IsSeed[i], res.ClusterID[i] = integer(), r.IntN(2) == 0, integer()
				fmt.Fprintf(&want, "%s,%s,%s,%d,%d,%d\n", g(tab.Points.Weight[i]), g(res.Rho[i]), delta, res.NH[i], b2i(res.IsSeed[i]), res.ClusterID[i])
			}
			var got bytes.Buffer
			if err := Write(&got, tab, res); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("%d coordinates, events and layers %v: the text differs from strconv's", dims, extra)
			}
		}
	}
}
