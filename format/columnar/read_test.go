package columnar

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestColumnsOfOtherLengths builds the table arrow-go's Parquet reader
// gives for a damaged file whose first column is shorter than the others
// (it takes the table's length from the first column, as fuzzing found):
// every reader refuses it, naming the file, instead of returning columns
// of different lengths.
func TestColumnsOfOtherLengths(t *testing.T) {
	sc := arrow.NewSchema(ClusterFields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, f := range b.Fields() {
		f.AppendEmptyValue()
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	cols := make([]arrow.Column, len(ClusterFields))
	for i, f := range ClusterFields {
		a := rec.Column(i)
		if i == 0 {
			a = array.NewSlice(a, 0, 0)
			defer a.Release()
		}
		ch := arrow.NewChunked(f.Type, []arrow.Array{a})
		cols[i] = *arrow.NewColumn(f, ch)
		ch.Release()
	}
	tbl := array.NewTable(sc, cols, 0)
	defer tbl.Release()
	if _, err := ClustersFromTable("damaged.parquet", tbl); err == nil || !strings.Contains(err.Error(), "damaged.parquet: column size has 1 rows, the table 0") {
		t.Fatalf("clusters: %v, want the column of another length named", err)
	}
	if _, err := HitsFromTable("damaged.parquet", tbl); err == nil || !strings.Contains(err.Error(), "damaged.parquet") {
		t.Fatalf("hits: %v, want an error naming the file", err)
	}
	if _, _, err := CLUEFromTable("damaged.parquet", tbl); err == nil || !strings.Contains(err.Error(), "damaged.parquet") {
		t.Fatalf("CLUE: %v, want an error naming the file", err)
	}
}
