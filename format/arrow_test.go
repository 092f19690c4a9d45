package format

import (
	"errors"
	"os"
	"testing"
)

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
