package columnar

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/hitflow/hitflow/internal/arrowipc"
)

// The Arrow IPC files and streams hitflow writes are read back with
// internal/arrowipc, which checks every count and size before it
// allocates (arrow-go's IPC reader trusts the counts in a file), and the
// columns' bytes become arrow-go arrays here, for the converters of the
// Parquet readers.

// ipcReader reads the record batches of an Arrow IPC file or stream.
type ipcReader struct {
	*arrowipc.Reader
	schema *arrow.Schema
}

// openIPC opens an Arrow IPC file or stream and reads its schema.
func openIPC(name string) (*ipcReader, error) {
	r, err := arrowipc.Open(name)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(r.Fields))
	for i, f := range r.Fields {
		fields[i] = arrow.Field{Name: f.Name, Nullable: f.Nullable, Type: arrowType(f)}
	}
	return &ipcReader{Reader: r, schema: arrow.NewSchema(fields, nil)}, nil
}

// arrowType is the arrow-go type of a column arrowipc reads.
func arrowType(f arrowipc.Field) arrow.DataType {
	switch {
	case f.Kind == arrowipc.Bool:
		return arrow.FixedWidthTypes.Boolean
	case f.Kind == arrowipc.Utf8:
		return arrow.BinaryTypes.String
	case f.Kind == arrowipc.Float && f.Bits == 32:
		return arrow.PrimitiveTypes.Float32
	case f.Kind == arrowipc.Float:
		return arrow.PrimitiveTypes.Float64
	}
	i := bits.TrailingZeros(uint(f.Bits)) - 3 // 8, 16, 32, 64 bits: 0 to 3
	if f.Kind == arrowipc.Int {
		return [...]arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64}[i]
	}
	return [...]arrow.DataType{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64}[i]
}

// next reads the next record batch; nil at the end. The arrays lie over
// buffers that the next call reuses, unless fresh.
func (r *ipcReader) next(fresh bool) (arrow.RecordBatch, error) {
	b, err := r.Next(fresh)
	if err != nil || b == nil {
		return nil, err
	}
	cols := make([]arrow.Array, len(b.Columns))
	for i, c := range b.Columns {
		bufs := []*memory.Buffer{nil, memory.NewBufferBytes(c.Values)}
		if c.Validity != nil {
			bufs[0] = memory.NewBufferBytes(c.Validity)
		}
		if c.Data != nil {
			bufs = append(bufs, memory.NewBufferBytes(c.Data))
		}
		d := array.NewData(r.schema.Field(i).Type, b.Rows, bufs, nil, c.Nulls, 0)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	rec := array.NewRecordBatch(r.schema, cols, int64(b.Rows))
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// readIPC reads an Arrow IPC file or stream whole, as a table of its
// record batches.
func readIPC(name string) (arrow.Table, error) {
	r, err := openIPC(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for {
		rec, err := r.next(true)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return array.NewTableFromRecords(r.schema, recs), nil
		}
		recs = append(recs, rec)
	}
}
