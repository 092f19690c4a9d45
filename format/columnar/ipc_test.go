package columnar

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ipcTypes are the column types the reader takes.
var ipcTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String,
}

// writeIPC writes the batches with arrow-go's writer, as a file or a
// stream.
func writeIPC(t *testing.T, name string, schema *arrow.Schema, recs []arrow.RecordBatch, stream bool) {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, ipc.WithSchema(schema))
	} else {
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIPCReadsArrowGo: files and streams of arrow-go's writer, of every
// type the reader takes, with and without nulls, in batches of 0 to 1000
// rows, read back to arrays equal to those written.
func TestIPCReadsArrowGo(t *testing.T) {
	var fields []arrow.Field
	for _, typ := range ipcTypes {
		fields = append(fields, arrow.Field{Name: typ.String(), Type: typ}, arrow.Field{Name: typ.String() + "?", Type: typ, Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	r := rand.New(rand.NewPCG(5, 6))
	var recs []arrow.RecordBatch
	for _, rows := range []int{0, 1, 7, 8, 9, 1000, 63} {
		rec := randomBatch(r, schema, rows, 2)
		defer rec.Release()
		recs = append(recs, rec)
	}
	for _, stream := range []bool{false, true} {
		name := filepath.Join(t.TempDir(), fmt.Sprint("t", stream, ".arrow"))
		writeIPC(t, name, schema, recs, stream)
		rd, err := openIPC(name)
		if err != nil {
			t.Fatal(err)
		}
		if !rd.schema.Equal(schema) {
			t.Fatalf("stream %v: schema %v, want %v", stream, rd.schema, schema)
		}
		for i, want := range recs {
			got, err := rd.next(i%2 == 0)
			if err != nil {
				t.Fatal(err)
			}
			if !array.RecordEqual(got, want) {
				t.Fatalf("stream %v: batch %d differs", stream, i)
			}
			got.Release()
		}
		if rec, err := rd.next(false); rec != nil || err != nil {
			t.Fatalf("stream %v: after the last batch: %v, %v", stream, rec, err)
		}
		rd.Close()
	}
}

// TestIPCForeign: what arrow-go (pyarrow, polars) can write beyond hitflow's
// columns is refused with an error that says what it is.
func TestIPCForeign(t *testing.T) {
	large := arrow.NewSchema([]arrow.Field{{Name: "class", Type: arrow.BinaryTypes.LargeString}}, nil)
	lb := array.NewRecordBuilder(memory.DefaultAllocator, large)
	defer lb.Release()
	lb.Field(0).(*array.LargeStringBuilder).Append("dot")
	dict := arrow.NewSchema([]arrow.Field{{Name: "class", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}}}, nil)
	db := array.NewRecordBuilder(memory.DefaultAllocator, dict)
	defer db.Release()
	if err := db.Field(0).(*array.BinaryDictionaryBuilder).AppendString("dot"); err != nil {
		t.Fatal(err)
	}
	plain := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	pb := array.NewRecordBuilder(memory.DefaultAllocator, plain)
	defer pb.Release()
	pb.Field(0).(*array.Int64Builder).AppendValues(make([]int64, 1000), nil)
	for _, tc := range []struct {
		schema *arrow.Schema
		rec    arrow.RecordBatch
		opt    ipc.Option
		want   string
	}{
		{large, lb.NewRecordBatch(), nil, `column "class" is of a type hitflow does not read: LargeUtf8`},
		{dict, db.NewRecordBatch(), nil, `column "class" is dictionary-encoded`},
		{plain, pb.NewRecordBatch(), ipc.WithLZ4(), "compressed buffers"},
	} {
		var buf bytes.Buffer
		opts := []ipc.Option{ipc.WithSchema(tc.schema)}
		if tc.opt != nil {
			opts = append(opts, tc.opt)
		}
		w := ipc.NewWriter(&buf, opts...)
		if err := errors.Join(w.Write(tc.rec), w.Close()); err != nil {
			t.Fatal(err)
		}
		tc.rec.Release()
		name := filepath.Join(t.TempDir(), "foreign.arrow")
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readIPC(name); err == nil || !strings.Contains(err.Error(), name+": byte ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
