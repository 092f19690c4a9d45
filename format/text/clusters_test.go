package text

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/pixel"
)

func TestClusterCSV(t *testing.T) {
	for _, tc := range []struct {
		calibrated bool
		want       string
	}{
		{false, ClusterCSVHeader + "\n" +
			"0,3,100,60,60,,10.5,20.3333,10,11,20,21,30\n" +
			"1,1,300,0,7,,200,5,200,200,5,5,7\n"},
		{true, ClusterCSVHeader + "\n" +
			"0,3,100,60,60,5,10.4,20.2,10,11,20,21,3\n" +
			"1,1,300,0,7,0.5,200,5,200,200,5,5,0.5\n"},
	} {
		var buf bytes.Buffer
		w, err := NewClusterCSV(&buf, Columns{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(fixture.Two(t, tc.calibrated)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("calibrated %v:\n%s\nwant\n%s", tc.calibrated, buf.String(), tc.want)
		}
	}
}

func TestCLog(t *testing.T) {
	var buf bytes.Buffer
	w := NewCLog(&buf)
	if !w.NeedsMembers() {
		t.Fatal("clog must ask for members")
	}
	if err := w.Write(fixture.Two(t, false)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	want := "Frame 1 (0.000000, 0.000000 s)\n[10, 20, 30, 100] [11, 20, 10, 151.5625] [11, 21, 20, 160] \n\n" +
		"Frame 2 (0.000000, 0.000000 s)\n[200, 5, 7, 300] \n\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
	// Without members the writers refuse rather than writing empty frames
	// or no hits.
	c, _ := pixel.NewClusterer(pixel.DefaultConfig())
	var h pixel.Hits
	h.Append(1, 1, 0, 1)
	c.Add(&h)
	bare := c.Flush()
	if err := w.Write(bare); !errors.Is(err, pixel.ErrNoMembers) {
		t.Fatalf("clog: error %v", err)
	}
}

// clusterWriter is what ClusterCSV and CLog have in common.
type clusterWriter interface {
	Write(*pixel.Clusters) error
	Close() error
}

// TestTextPartsInOrder: a batch formatted by several goroutines gives
// the bytes of its clusters written a few at a time, for the CSV and the
// cluster log (whose frame numbers run on from batch to batch), with ToT
// and with energies.
func TestTextPartsInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // parts on any machine
	for _, calibrated := range []bool{false, true} {
		small := fixture.Batches(t, "gamma", 60000, 1000, calibrated) // each below textparts.MinRows clusters
		all := fixture.Concat(small)
		if all.Len() < 4*textparts.MinRows {
			t.Fatalf("%d clusters: too few for four parts", all.Len())
		}
		for _, w := range []struct {
			name string
			open func(io.Writer) clusterWriter
		}{
			{"csv", func(w io.Writer) clusterWriter {
				cw, _ := NewClusterCSV(w, Columns{})
				return cw
			}},
			{"clog", func(w io.Writer) clusterWriter {
				return NewCLog(w)
			}},
		} {
			var parts, pieces bytes.Buffer
			for _, write := range []struct {
				buf     *bytes.Buffer
				batches []*pixel.Clusters
			}{{&parts, []*pixel.Clusters{all}}, {&pieces, small}} {
				cw := w.open(write.buf)
				for _, b := range write.batches {
					if err := cw.Write(b); err != nil {
						t.Fatal(err)
					}
				}
				if err := cw.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if parts.Len() == 0 || !bytes.Equal(parts.Bytes(), pieces.Bytes()) {
				t.Errorf("%s, calibrated %v: %d bytes in parts, %d a few clusters at a time", w.name, calibrated, parts.Len(), pieces.Len())
			}
		}
	}
}

// TestPlainRows: rows of the plain cluster CSV (the one-pass path) read
// as the same rows with their first field quoted (the field parser):
// the same clusters and the same errors, for fields at the one-pass
// path's edges.
func TestPlainRows(t *testing.T) {
	forms := []string{"7", "7.5", "-7.25", "+7", " 7", "7 ", "1e3", "", "-0", "0.000001", "123456789012345678901", "x", "7,8"}
	for seed := range 200 {
		r := rand.New(rand.NewPCG(uint64(seed), 8))
		var plain, quoted strings.Builder
		plain.WriteString(ClusterCSVHeader + "\n")
		quoted.WriteString(ClusterCSVHeader + "\n")
		energy := r.IntN(2) == 0
		for range 30 {
			f := make([]string, 13)
			for k := range f {
				f[k] = strconv.Itoa(1 + r.IntN(300))
				if k == 5 && !energy {
					f[k] = ""
				}
				if k > 0 && r.IntN(40) == 0 { // the first field is quoted below
					f[k] = forms[r.IntN(len(forms))]
				}
			}
			plain.WriteString(strings.Join(f, ",") + "\n")
			f[0] = `"` + f[0] + `"`
			quoted.WriteString(strings.Join(f, ",") + "\n")
		}
		name := filepath.Join(t.TempDir(), "c.csv")
		read := func(text string) (*pixel.Clusters, error) {
			if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			return ReadClusters(name)
		}
		a, errA := read(plain.String())
		b, errB := read(quoted.String())
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("seed %d: %v; field parser: %v", seed, errA, errB)
		}
		if errA == nil && (a.Calibrated != b.Calibrated || !slices.Equal(a.ID, b.ID) || !slices.Equal(a.FirstToA, b.FirstToA) ||
			!slices.Equal(a.LastToA, b.LastToA) || !slices.Equal(a.ESum, b.ESum) || !slices.Equal(a.X, b.X) || !slices.Equal(a.Max, b.Max) ||
			!slices.Equal(a.XMin, b.XMin) || !slices.Equal(a.YMax, b.YMax) || !slices.Equal(a.ToTSum, b.ToTSum) || !slices.Equal(a.Size, b.Size)) {
			t.Fatalf("seed %d: other clusters than the field parser's", seed)
		}
	}
}

// TestClustersInParts: a cluster CSV read in blocks of any size, each
// cut into any number of parts parsed at once, gives the clusters (and
// the first error) of the file read in one part, whole or a block at a
// time.
func TestClustersInParts(t *testing.T) {
	name := filepath.Join(t.TempDir(), "c.csv")
	for seed := range 120 {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		cols := []Columns{{}, {Shapes: true, TOF: true}, {TOF: true}}[seed%3]
		// Rows with energies: none, all, or some (the last row of a
		// batch says whether it is calibrated).
		mode := r.IntN(3)
		var text strings.Builder
		text.WriteString(cols.header() + "\n")
		rows := r.IntN(300)
		energy := make([]bool, rows)
		bad := map[int]bool{}
		for range r.IntN(4) {
			bad[r.IntN(rows+1)] = true
		}
		for i := range rows + 1 {
			if bad[i] {
				text.WriteString([]string{"1,2,x", "1,2,3,4,5,,6,7,8,9,10,11,12,13,14,15,16"}[r.IntN(2)] + "\n")
			}
			if i == rows {
				break
			}
			f := []string{strconv.Itoa(i), strconv.Itoa(1 + r.IntN(9)), strconv.FormatFloat(r.Float64()*1e6, 'f', 4, 64), "3.125", strconv.Itoa(r.IntN(900)), "",
				"12.5", strconv.Itoa(r.IntN(256)), "1", "2", "3", "4", strconv.Itoa(r.IntN(300))}
			if energy[i] = mode == 1 || mode == 2 && r.IntN(2) == 0; energy[i] {
				f[5] = strconv.Itoa(r.IntN(90))
			}
			if cols.Shapes {
				f = append(f, "3", "0", "0.5", "0.25", "2.5", "1.125", []string{"dot", "small_blob", "straight_track"}[r.IntN(3)])
			}
			if cols.TOF {
				if r.IntN(4) == 0 {
					f = append(f, "", "")
				} else {
					f = append(f, "1500.5", strconv.Itoa(r.IntN(50)))
				}
			}
			text.WriteString(strings.Join(f, ",") + "\n")
		}
		if err := os.WriteFile(name, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		// Each read is written back as CSV: every column compared.
		read := func(block, workers int, whole bool) (string, error) {
			var out bytes.Buffer
			w, err := NewClusterCSV(&out, cols)
			if err != nil {
				t.Fatal(err)
			}
			err = scanClusters(name, block, workers, whole, func(c *pixel.Clusters) error {
				if n := c.Len(); n > 0 && c.Calibrated != energy[c.ID[n-1]] {
					t.Fatalf("seed %d, blocks of %d bytes in %d parts: calibrated %v, not as the last row", seed, block, workers, c.Calibrated)
				}
				return w.Write(c)
			})
			w.Flush()
			return out.String(), err
		}
		want, wantErr := read(1<<30, 1, true)
		if (wantErr != nil) != (len(bad) > 0) {
			t.Fatalf("seed %d: error %v with bad lines %v", seed, wantErr, bad)
		}
		if wantErr == nil && strings.Count(want, "\n") != rows+1 {
			t.Fatalf("seed %d: %d lines, want %d", seed, strings.Count(want, "\n"), rows+1)
		}
		for _, block := range []int{1, 37, 500, 4096} {
			for _, workers := range []int{1, 2, 3, 7} {
				for _, whole := range []bool{true, false} {
					got, err := read(block, workers, whole)
					// Batches of rows with and without energies are
					// written with or without by their last row.
					same := whole || mode != 2
					if fmt.Sprint(err) != fmt.Sprint(wantErr) || wantErr == nil && same && got != want {
						t.Fatalf("seed %d, blocks of %d bytes in %d parts, whole %v: %v\n%.300s\nwant %v\n%.300s", seed, block, workers, whole, err, got, wantErr, want)
					}
				}
			}
		}
	}
}

// FuzzClustersInParts: a cluster CSV read in one part and in small blocks
// of three parts, whole or a block at a time, gives the same clusters and
// the same error.
func FuzzClustersInParts(f *testing.F) {
	f.Add([]byte(ClusterCSVHeader + "\n0,1,2481.25,0,81,,110,16,110,110,16,16,81\n1,7,5195.3125,3.125,379,2.5,227.2876,221.0264,226,228,220,222,74\n"))
	f.Add([]byte(ClusterCSVHeader + ShapeCSVColumns + TOFCSVColumns + "\n0,1,2,0,81,,1,1,1,1,1,1,81,1,0,0,0,0,0,dot,,\n"))
	name := filepath.Join(f.TempDir(), "fuzz.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		read := func(block, workers int, whole bool) (string, error) {
			var out bytes.Buffer
			var w *ClusterCSV
			err := scanClusters(name, block, workers, whole, func(c *pixel.Clusters) error {
				if w == nil {
					var err error
					if w, err = NewClusterCSV(&out, Columns{Shapes: c.HasShapes(), TOF: c.HasTOF()}); err != nil {
						return err
					}
				}
				fmt.Fprintf(&out, "calibrated %v\n", c.Calibrated)
				return w.Write(c)
			})
			if w != nil {
				w.Flush()
			}
			return out.String(), err
		}
		want, wantErr := read(1<<30, 1, true)
		got, err := read(1+len(data)%13, 3, true)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || wantErr == nil && got != want {
			t.Fatalf("in parts: %v\n%s\nin one: %v\n%s", err, got, wantErr, want)
		}
		if wantErr != nil && !strings.Contains(wantErr.Error(), "fuzz.csv") {
			t.Fatalf("error without the file name: %v", wantErr)
		}
		if _, err := read(1+len(data)%13, 3, false); fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("a block at a time: %v, whole: %v", err, wantErr)
		}
	})
}
