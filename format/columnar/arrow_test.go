package columnar

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel"
)

// TestArrowLargeBatches writes batches of clusters to Arrow, the small
// ones gathered in the table's builders and the large ones sent over
// their own columns, in one order, and reads every value back: the
// energies as nulls without calibration.
func TestArrowLargeBatches(t *testing.T) {
	all := fixture.Gamma()
	sizes := []int{100, directRows + 900, 10, directRows, 3 * directRows, 1}
	r := rand.New(rand.NewPCG(3, 4))
	for _, calibrated := range []bool{false, true} {
		var batches []*pixel.Clusters
		at := 0
		for _, n := range sizes {
			b := &pixel.Clusters{}
			b.Reset()
			b.Append(fixture.Slice(all, at, at+n))
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
		tbl := fixture.ReadArrow(t, name)
		fixture.CheckNulls(t, tbl.Column(5), calibrated)
		got, err := ClustersFromTable(name, tbl)
		if err != nil {
			t.Fatal(err)
		}
		fixture.SameClusters(t, "arrow", got, fixture.Concat(batches), false)
	}
}

// writeClusters writes the batches to name, .parquet or .arrow.
func writeClusters(t *testing.T, name string, batches ...*pixel.Clusters) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	newTable := NewClusterParquet
	if filepath.Ext(name) == ".arrow" {
		newTable = NewClusterArrow
	}
	w, err := newTable(f, Options{})
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

// roundTrip writes the batches to name, .parquet or .arrow, and reads
// them back.
func roundTrip(t *testing.T, name string, batches ...*pixel.Clusters) *pixel.Clusters {
	t.Helper()
	writeClusters(t, name, batches...)
	var got *pixel.Clusters
	var err error
	if filepath.Ext(name) == ".arrow" {
		got, err = ClustersFromTable(name, fixture.ReadArrow(t, name))
	} else {
		got, err = ReadClusters(name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestArrowStreamFlush: what an Arrow IPC stream's Flush sends is in the
// writer at once, a batch a reader takes, though far less than the
// writer's buffer.
func TestArrowStreamFlush(t *testing.T) {
	var out bytes.Buffer
	tbl, err := NewClusterArrow(&out, Options{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &pixel.Clusters{}
	c.Reset()
	c.Append(fixture.Slice(fixture.Gamma(), 0, 10))
	c.Members, c.Start = pixel.Hits{}, []int{0}
	if err := tbl.Write(c); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Next() || r.RecordBatch().NumRows() != 10 {
		t.Fatalf("the flushed stream (%d bytes) holds no batch of the 10 clusters: %v", out.Len(), r.Err())
	}
}
