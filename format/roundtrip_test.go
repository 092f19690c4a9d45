package format

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go-hep.org/x/hep/groot"
	"go-hep.org/x/hep/groot/rtree"

	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// writeClusters writes the batches to the named file.
func writeClusters(t testing.TB, name string, batches ...*pixel.Clusters) {
	t.Helper()
	writeWith(t, name, Columns{}, batches)
}

// roundTrip writes the batches to the named file and reads them back.
func roundTrip(t *testing.T, name string, batches ...*pixel.Clusters) *pixel.Clusters {
	t.Helper()
	return writeRead(t, name, Columns{}, batches)
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
			fixture.SameClusters(t, ext, got, want, ext == ".root")
		}
	}
}

// TestROOTLayout checks the tree the way root-ls and root-dump show it:
// branch names and leaf types, the count leaf of the hit branches, the
// entries, and the leaf streamers in the file.
func TestROOTLayout(t *testing.T) {
	name := filepath.Join(t.TempDir(), "c.root")
	w, err := CreateClusters(name, nil)
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
			got, err := ReadHits(name)
			if err != nil {
				t.Fatal(err)
			}
			if kind, err := Kind(name); err != nil || kind != "hits" {
				t.Fatalf("%s: kind %q, %v", ext, kind, err)
			}
			if _, _, err := ReadCLUE(name); ext != ".csv" && (err == nil || !strings.HasSuffix(err.Error(), ": columns x,y,toa_ns,tot,energy_kev,cluster are not a CLUE result")) {
				t.Fatalf("%s: read as a CLUE result: %v", ext, err)
			}
			if ext == ".arrow" { // hitflow's reader gives what arrow-go's does
				tbl := fixture.ReadArrow(t, name)
				fixture.CheckNulls(t, tbl.Column(4), calibrated)
				if ag, err := columnar.HitsFromTable(name, tbl); err != nil || !reflect.DeepEqual(ag, got) {
					t.Fatalf("calibrated %v: arrow-go's reader gave other hits (%v)", calibrated, err)
				}
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
		if kind, err := Kind(name); err != nil || kind != "clusters" {
			t.Fatalf("%s: kind %q, %v", ext, kind, err)
		}
	}
}

// TestShapesRoundTrip: the morphology columns (--shapes) come back from
// .csv (to its 4 decimals), .parquet, .arrow and .root; .clog refuses
// them, and a writer of them refuses clusters without.
func TestShapesRoundTrip(t *testing.T) {
	batches := fixture.Clusters(t, false)
	var shaper analysis.Shaper
	for _, b := range batches {
		if err := shaper.Describe(b, analysis.DefaultRules); err != nil {
			t.Fatal(err)
		}
	}
	want := fixture.Concat(batches)
	if !want.HasShapes() || slices.Max(want.Class) == 0 {
		t.Fatal("no shapes, or every cluster a dot")
	}
	for _, ext := range []string{".csv", ".parquet", ".arrow", ".root"} {
		got := writeRead(t, filepath.Join(t.TempDir(), "shaped"+ext), Columns{Shapes: true}, batches)
		fixture.SameClusters(t, ext, got, want, ext == ".root")
		tol := 0.0
		if ext == ".csv" {
			tol = 0.5e-4
		}
		for i := range want.Len() {
			if got.Pixels[i] != want.Pixels[i] || got.Inner[i] != want.Inner[i] || got.Class[i] != want.Class[i] ||
				math.Abs(got.Roundness[i]-want.Roundness[i]) > tol || math.Abs(got.Linearity[i]-want.Linearity[i]) > tol ||
				math.Abs(got.Length[i]-want.Length[i]) > tol || math.Abs(got.Width[i]-want.Width[i]) > tol {
				t.Fatalf("%s: cluster %d differs", ext, i)
			}
		}
		// Without the columns, a writer of them refuses the batch.
		w, err := CreateClustersWith(filepath.Join(t.TempDir(), "bare"+ext), nil, Columns{Shapes: true})
		if err != nil {
			t.Fatal(err)
		}
		bare := fixture.Clusters(t, false)[0]
		if err := w.Write(bare); err == nil || !strings.Contains(err.Error(), "morphology") {
			t.Errorf("%s: writing clusters without shapes: %v", ext, err)
		}
		outfile.Abort(w)
	}
	if _, err := CreateClustersWith("x.clog", nil, Columns{Shapes: true}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf(".clog: %v", err)
	}
}

// TestTOFRoundTrip: the time-of-flight columns come back exactly, the
// clusters before the first pulse as such, from .csv, .parquet, .arrow
// and .root.
func TestTOFRoundTrip(t *testing.T) {
	batches := fixture.Clusters(t, false)
	want := fixture.Concat(batches)
	tof := analysis.TOF{}
	// Pulses every 20 us from a third of the run on.
	first, last := want.FirstToA[want.Len()/3], slices.Max(want.FirstToA)
	var refs []pixel.Time
	for r := first; r <= last; r += 20 * pixel.Microsecond {
		refs = append(refs, r)
	}
	tof.AddReferences(refs)
	for _, b := range batches {
		tof.Assign(b)
	}
	want = fixture.Concat(batches)
	if tof.Before() == 0 || tof.Before() == int64(want.Len()) {
		t.Fatalf("%d of %d clusters before the first pulse", tof.Before(), want.Len())
	}
	for _, ext := range []string{".csv", ".parquet", ".arrow", ".root"} {
		got := writeRead(t, filepath.Join(t.TempDir(), "tof"+ext), Columns{TOF: true, FlightPath: 12}, batches)
		if !slices.Equal(got.Pulse, want.Pulse) || !slices.Equal(got.TOF, want.TOF) {
			t.Errorf("%s: the time of flight differs", ext)
		}
	}
}

// writeStream writes the batches as the Arrow stream of "-.arrow" into
// the named file.
func writeStream(t testing.TB, name string, batches ...*pixel.Clusters) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := CreateClusters("-.arrow", f)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// writeWith writes the batches to name with the optional columns.
func writeWith(t testing.TB, name string, cols Columns, batches []*pixel.Clusters) {
	t.Helper()
	w, err := CreateClustersWith(name, nil, cols)
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

// writeRead writes the batches to name with the optional columns and
// reads them back; an Arrow file also with arrow-go's reader, which must
// give the same clusters as hitflow's.
func writeRead(t *testing.T, name string, cols Columns, batches []*pixel.Clusters) *pixel.Clusters {
	t.Helper()
	writeWith(t, name, cols, batches)
	got, err := ReadClusters(name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".arrow") {
		ag, err := columnar.ClustersFromTable(name, fixture.ReadArrow(t, name))
		if err != nil {
			t.Fatal(err)
		}
		fixture.SameClusters(t, "arrow-go's reader", ag, got, false)
	}
	return got
}

// TestScanClusters: reading in batches, and reading whole, gives the
// clusters written, in more than one batch where the format streams.
func TestScanClusters(t *testing.T) {
	batches := fixture.Batches(t, "gamma", 400000, 0, false)
	want := fixture.Concat(batches)
	for _, ext := range []string{".csv", ".parquet", ".arrow", ".root", "-.arrow"} {
		name := filepath.Join(t.TempDir(), "c"+ext)
		if ext == "-.arrow" { // the stream of standard output, kept in a file
			name = filepath.Join(t.TempDir(), "stream.arrow")
			writeStream(t, name, batches...)
		} else {
			writeClusters(t, name, batches...)
		}
		got := &pixel.Clusters{}
		got.Reset()
		n := 0
		err := ScanClusters(name, func(c *pixel.Clusters) error {
			got.Append(c)
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		fixture.SameClusters(t, ext, got, want, ext == ".root")
		whole, err := ReadClusters(name) // its columns sized once by the file
		if err != nil {
			t.Fatal(err)
		}
		fixture.SameClusters(t, ext, whole, want, ext == ".root")
		if streams := ext != ".root"; streams != (n > 1) {
			t.Errorf("%s: %d batches of %d clusters", ext, n, want.Len())
		}
		stop := errors.New("stop")
		if err := ScanClusters(name, func(*pixel.Clusters) error { return stop }); err != stop {
			t.Errorf("%s: the error of fn came back as %v", ext, err)
		}
	}
}
