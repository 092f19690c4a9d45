package columnar

import (
	"bytes"
	"encoding/binary"
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

// TestIPCDamaged: damaged and foreign files are errors naming the file and
// the byte, before anything large is allocated.
func TestIPCDamaged(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}, {Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	sb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	sb.Field(0).(*array.StringBuilder).AppendValues([]string{"ab", "", "cde"}, nil)
	sb.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	rec := sb.NewRecordBatch()
	defer rec.Release()
	dir := t.TempDir()
	valid := func(stream bool) []byte {
		name := filepath.Join(dir, "v.arrow")
		writeIPC(t, name, schema, []arrow.RecordBatch{rec}, stream)
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	file, stream := valid(false), valid(true)
	// The record batch message: after the schema's, in the stream.
	schemaLen := 8 + int(binary.LittleEndian.Uint32(stream[4:]))
	batchMeta := stream[schemaLen+8 : schemaLen+8+int(binary.LittleEndian.Uint32(stream[schemaLen+4:]))]
	// mutate returns a copy of b with the 4 bytes at i set to v.
	mutate := func(b []byte, i int, v uint32) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint32(b[i:], v)
		return b
	}
	// The body's values: the string offsets 0, 2, 2, 5 follow a validity
	// buffer of none, at the body's start.
	body := schemaLen + 8 + len(batchMeta)
	offsets := body + bytes.Index(stream[body:], []byte{0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0})
	for _, tc := range []struct {
		what string
		data []byte
		want string
	}{
		{"empty", nil, "an empty file"},
		{"text", []byte("x,y\n1,2\n"), "byte 0: metadata of 175713400 bytes, beyond the messages' end at byte 8"},
		{"file cut short", file[:len(file)/2], "without its closing magic"},
		{"stream cut in a body", stream[:len(stream)-20], "a body of 48 bytes, beyond the messages' end"},
		{"stream cut in a message's length", stream[:schemaLen+2], "the file ends inside a message"},
		{"stream without its end", stream[:len(stream)-8], "the stream ends without its end marker"},
		{"footer too long", mutate(file, len(file)-10, 1<<30), "a footer of 1073741824 bytes"},
		{"metadata too long", mutate(stream, 4, 1<<31-1), "byte 0: metadata of 2147483647 bytes"},
		{"falling string offsets", mutate(stream, offsets+8, 1), "string offset 1 of row 2 below the one before"},
		{"string offsets beyond the data", mutate(stream, offsets+12, 1000), "string offset 1000 of row 3"},
		{"root offset out of the metadata", mutate(stream, schemaLen+8, 1<<30), "damaged message: offset 1073741824 out of the metadata"},
	} {
		name := filepath.Join(dir, "d.arrow")
		if err := os.WriteFile(name, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readIPC(name)
		if err == nil || !strings.Contains(err.Error(), name+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.what, err, tc.want)
		}
	}
}
