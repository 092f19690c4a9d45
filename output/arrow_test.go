package output

import (
	"errors"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// readArrowFile reads an Arrow IPC file written by a test, with the
// columns of fields. hitflow itself does not read Arrow files back (see
// arrowNotRead); these are trusted.
func readArrowFile(t *testing.T, name string, fields []arrow.Field) arrow.Table {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fr, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	var recs []arrow.RecordBatch
	for i := range fr.NumRecords() {
		rec, err := fr.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		recs = append(recs, rec)
	}
	tbl := array.NewTableFromRecords(fr.Schema(), recs)
	t.Cleanup(tbl.Release)
	if err := checkColumns(name, tbl, fields); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestArrowNotRead: the readers turn Arrow files away with an error naming
// the file and the formats they read.
func TestArrowNotRead(t *testing.T) {
	name := "run/clusters.arrow"
	_, err1 := ReadClusters(name)
	_, err2 := ReadHits(name)
	_, _, err3 := ReadCLUE(name)
	_, err4 := Kind(name)
	for i, err := range []error{err1, err2, err3, err4} {
		want := "run/clusters.arrow: Arrow files are written for pyarrow, polars or pandas, not read back by hitflow; use .parquet, .csv or .root"
		if i == 1 { // hits have no ROOT form
			want = "run/clusters.arrow: Arrow files are written for pyarrow, polars or pandas, not read back by hitflow; use .parquet or .csv"
		}
		if err == nil || err.Error() != want || errors.Is(err, os.ErrNotExist) {
			t.Fatalf("error %v", err)
		}
	}
}
