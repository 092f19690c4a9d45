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
