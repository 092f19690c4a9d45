package text

import (
	"bytes"
	"errors"
	"io"
	"runtime"
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
