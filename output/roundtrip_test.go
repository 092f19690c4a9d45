package output

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"go-hep.org/x/hep/groot"
	"go-hep.org/x/hep/groot/rtree"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel"
)

// sameClusters compares every feature, and the hits when both have them.
func sameClusters(t *testing.T, format string, got, want *pixel.Clusters, members bool) {
	t.Helper()
	if got.Len() != want.Len() || got.Calibrated != want.Calibrated {
		t.Fatalf("%s: %d clusters (calibrated %v), want %d (%v)", format, got.Len(), got.Calibrated, want.Len(), want.Calibrated)
	}
	eq := func(name string, ok bool) {
		if !ok {
			t.Fatalf("%s: column %s differs", format, name)
		}
	}
	eq("id", slices.Equal(got.ID, want.ID))
	eq("size", slices.Equal(got.Size, want.Size))
	eq("toa", slices.Equal(got.FirstToA, want.FirstToA))
	eq("span", slices.Equal(got.LastToA, want.LastToA))
	eq("tot_sum", slices.Equal(got.ToTSum, want.ToTSum))
	// The CSV writes these to CSVDecimals: within half a unit of the last
	// decimal (and the float product's rounding); the others keep every bit.
	floats := func(a, b []float64) bool {
		if format != ".csv" {
			return slices.Equal(a, b)
		}
		return slices.EqualFunc(a, b, func(x, y float64) bool {
			return math.Abs(x-y) <= 0.5e-4*(1+1e-9)+math.Abs(y)*1e-15
		})
	}
	eq("energy", floats(got.ESum, want.ESum))
	eq("x", floats(got.X, want.X))
	eq("y", floats(got.Y, want.Y))
	eq("xmin", slices.Equal(got.XMin, want.XMin))
	eq("xmax", slices.Equal(got.XMax, want.XMax))
	eq("ymin", slices.Equal(got.YMin, want.YMin))
	eq("ymax", slices.Equal(got.YMax, want.YMax))
	eq("max", floats(got.Max, want.Max))
	if members {
		eq("start", slices.Equal(got.Start, want.Start))
		m, w := &got.Members, &want.Members
		eq("hit x", slices.Equal(m.X, w.X))
		eq("hit y", slices.Equal(m.Y, w.Y))
		eq("hit toa", slices.Equal(m.ToA, w.ToA))
		eq("hit tot", slices.Equal(m.ToT, w.ToT))
		eq("hit e", slices.Equal(m.E, w.E))
	}
}

// writeClusters writes the batches to the named file.
func writeClusters(t testing.TB, name string, batches ...*pixel.Clusters) {
	t.Helper()
	w, err := CreateClusters(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// roundTrip writes the batches to the named file and reads them back.
func roundTrip(t *testing.T, name string, batches ...*pixel.Clusters) *pixel.Clusters {
	t.Helper()
	writeClusters(t, name, batches...)
	if strings.HasSuffix(name, ".arrow") {
		return clustersFromTable(readArrowFile(t, name, ClusterParquetFields))
	}
	got, err := ReadClusters(name)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestClusterRoundTrip writes simulated clusters in every readable format,
// batch by batch, reads them back and compares all values.
func TestClusterRoundTrip(t *testing.T) {
	for _, calibrated := range []bool{false, true} {
		batches := fixture.Clusters(t, calibrated)
		want := fixture.Concat(batches)
		if want.Len() < 500 {
			t.Fatalf("%d clusters", want.Len())
		}
		for _, ext := range []string{".csv", ".parquet", ".arrow", ".root"} {
			got := roundTrip(t, filepath.Join(t.TempDir(), "clusters"+ext), batches...)
			sameClusters(t, ext, got, want, ext == ".root")
		}
	}
}

// TestROOTLayout checks the tree the way root-ls and root-dump show it:
// branch names and leaf types, the count leaf of the hit branches, the
// entries, and the leaf streamers in the file.
func TestROOTLayout(t *testing.T) {
	name := filepath.Join(t.TempDir(), "c.root")
	w, err := CreateClusterROOT(name)
	if err != nil {
		t.Fatal(err)
	}
	batches := fixture.Clusters(t, true)
	for _, b := range batches {
		w.Write(b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := groot.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	obj, err := f.Get("clusters")
	if err != nil {
		t.Fatal(err)
	}
	tree := obj.(rtree.Tree)
	if tree.Entries() != int64(fixture.Concat(batches).Len()) {
		t.Fatalf("%d entries", tree.Entries())
	}
	var titles []string
	for _, b := range tree.Branches() {
		titles = append(titles, b.Class()+" "+b.Title())
	}
	want := []string{"TBranch id/L", "TBranch size/I", "TBranch toa_ns/D", "TBranch span_ns/D", "TBranch tot_sum/L",
		"TBranch energy_kev/D", "TBranch calibrated/O", "TBranch cx/D", "TBranch cy/D",
		"TBranch xmin/s", "TBranch xmax/s", "TBranch ymin/s", "TBranch ymax/s", "TBranch max/D", "TBranch n/I",
		"TBranchElement x", "TBranchElement y", "TBranchElement toa", "TBranchElement tot", "TBranchElement e"}
	if !slices.Equal(titles, want) {
		t.Fatalf("branches %q\nwant %q", titles, want)
	}
	var classes []string
	for _, si := range f.StreamerInfos() {
		classes = append(classes, si.Name())
	}
	for _, c := range []string{"TTree", "TBranch", "TLeaf", "TNamed"} {
		if !slices.Contains(classes, c) {
			t.Errorf("no streamer for %s in %q", c, classes)
		}
	}
	if fi, _ := os.Stat(name); fi.Size() > 4<<20 {
		t.Errorf("%d bytes: not compressed?", fi.Size())
	}
}

// TestHitsRoundTrip writes labelled hits as CSV, Parquet and Arrow and
// reads them back, energies included for the last two.
func TestHitsRoundTrip(t *testing.T) {
	for _, calibrated := range []bool{false, true} {
		batches := fixture.Clusters(t, calibrated)
		want := fixture.Concat(batches)
		for _, ext := range []string{".csv", ".parquet", ".arrow"} {
			name := filepath.Join(t.TempDir(), "hits"+ext)
			w, err := CreateHits(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range batches {
				if err := w.WriteMembers(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var got *pixel.Labelled
			if ext == ".arrow" {
				tbl := readArrowFile(t, name, HitParquetFields)
				checkNulls(t, tbl.Column(4), calibrated)
				got = hitsFromTable(tbl)
			} else if got, err = ReadHits(name); err != nil {
				t.Fatal(err)
			}
			m := &want.Members
			ok := slices.Equal(got.Hits.X, m.X) && slices.Equal(got.Hits.Y, m.Y) && slices.Equal(got.Hits.ToA, m.ToA) && slices.Equal(got.Hits.ToT, m.ToT)
			if ext != ".csv" {
				ok = ok && slices.Equal(got.Hits.E, m.E)
			}
			for i := range want.Len() {
				for _, l := range got.Labels[want.Start[i]:want.Start[i+1]] {
					ok = ok && l == want.ID[i]
				}
			}
			if !ok || len(got.Labels) != m.Len() {
				t.Fatalf("%s (calibrated %v): hits differ after the round trip", ext, calibrated)
			}
		}
	}
}

// TestEmptyClusterTables: a run without clusters still writes a file that
// reads back as no clusters, in each columnar format.
func TestEmptyClusterTables(t *testing.T) {
	for _, ext := range []string{".parquet", ".arrow"} {
		name := filepath.Join(t.TempDir(), "clusters"+ext)
		got := roundTrip(t, name)
		if got.Len() != 0 {
			t.Fatalf("%s: %d clusters from an empty run", ext, got.Len())
		}
		if kind, err := Kind(name); ext == ".parquet" && (err != nil || kind != "clusters") {
			t.Fatalf("%s: kind %q, %v", ext, kind, err)
		}
	}
}

// TestArrowLargeBatches writes batches of clusters to Arrow, the small
// ones gathered in the table's builders and the large ones sent over
// their own columns, in one order, and reads every value back: the
// energies as nulls without calibration.
func TestArrowLargeBatches(t *testing.T) {
	all := gammaClusters()
	sizes := []int{100, directRows + 900, 10, directRows, 3 * directRows, 1}
	r := rand.New(rand.NewPCG(3, 4))
	for _, calibrated := range []bool{false, true} {
		var batches []*pixel.Clusters
		at := 0
		for _, n := range sizes {
			b := &pixel.Clusters{}
			b.Reset()
			b.Append(slice(all, at, at+n))
			b.Members, b.Start = pixel.Hits{}, []int{0}
			if b.Calibrated = calibrated; calibrated {
				for i := range b.ESum {
					b.ESum[i] = r.Float64() * 100
				}
			}
			batches = append(batches, b)
			at += n
		}
		name := filepath.Join(t.TempDir(), "c.arrow")
		writeClusters(t, name, batches...)
		tbl := readArrowFile(t, name, ClusterParquetFields)
		checkNulls(t, tbl.Column(5), calibrated)
		sameClusters(t, "arrow", clustersFromTable(tbl), fixture.Concat(batches), false)
	}
}

// checkNulls checks that a column of energies has none null when
// calibrated, and all otherwise.
func checkNulls(t *testing.T, col *arrow.Column, calibrated bool) {
	t.Helper()
	for _, chunk := range col.Data().Chunks() {
		if nulls := chunk.NullN(); calibrated && nulls != 0 || !calibrated && nulls != chunk.Len() {
			t.Fatalf("calibrated %v: %d energies of %d null", calibrated, nulls, chunk.Len())
		}
	}
}
