package columnar

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/hitflow/hitflow/clue/cluecsv"
)

// randomBatch is a record batch of n random rows of the schema; nulls
// where a column may have them: none, all, or some of them (mode 0, 1, 2).
func randomBatch(r *rand.Rand, schema *arrow.Schema, n, mode int) arrow.RecordBatch {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	for c, b := range rb.Fields() {
		for range n {
			if schema.Field(c).Nullable && (mode == 1 || mode == 2 && r.IntN(3) == 0) {
				b.AppendNull()
				continue
			}
			switch b := b.(type) {
			case *array.Int64Builder:
				b.Append(r.Int64N(1<<40) - 1<<39)
			case *array.Int32Builder:
				b.Append(r.Int32N(1 << 20))
			case *array.Uint16Builder:
				b.Append(uint16(r.IntN(256)))
			case *array.Float64Builder:
				b.Append(r.NormFloat64() * 1e3)
			case *array.Float32Builder:
				b.Append(float32(r.NormFloat64()))
			case *array.BooleanBuilder:
				b.Append(r.IntN(2) == 0)
			case *array.Int8Builder:
				b.Append(int8(r.Uint32()))
			case *array.Int16Builder:
				b.Append(int16(r.Uint32()))
			case *array.Uint8Builder:
				b.Append(uint8(r.Uint32()))
			case *array.Uint32Builder:
				b.Append(r.Uint32())
			case *array.Uint64Builder:
				b.Append(r.Uint64())
			case *array.StringBuilder:
				b.Append(strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(10)))
			default:
				panic(fmt.Sprintf("randomBatch: no values for %T", b))
			}
		}
	}
	return rb.NewRecordBatch()
}

// TestParquetSinkMatchesArrowGo: the columns encoded in parallel, in
// reused memory, make the same file, to the byte, as arrow-go's own
// writer of the same record batches in fresh memory, for every table the
// package writes: full row groups, small ones, a single row, and nullable
// columns without nulls, all null, or with some.
func TestParquetSinkMatchesArrowGo(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Log("one core: the columns are encoded one after the other")
	}
	tables := map[string][]arrow.Field{
		"clusters": ClusterFields,
		"hits":     HitFields,
		"events":   EventFields,
		"clue":     clueFields(&cluecsv.Table{Coords: []string{"x", "y"}, Layer: true}),
	}
	for name, fields := range tables {
		t.Run(name, func(t *testing.T) {
			schema := arrow.NewSchema(fields, nil)
			r := rand.New(rand.NewPCG(1, uint64(len(fields))))
			var batches []arrow.RecordBatch
			for i, n := range []int{rowGroup, 1000, 1, rowGroup - 1, 70000, 17} {
				batches = append(batches, randomBatch(r, schema, n, i%3))
			}
			defer func() {
				for _, b := range batches {
					b.Release()
				}
			}()
			var got, want bytes.Buffer
			sink, err := newParquetSink(&got, schema, parquetProps(fields))
			if err != nil {
				t.Fatal(err)
			}
			ref, err := pqarrow.NewFileWriter(schema, &want, parquet.NewWriterProperties(parquetOptions(fields)...), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range batches {
				if err := sink.Write(b); err != nil {
					t.Fatal(err)
				}
				if err := ref.Write(b); err != nil {
					t.Fatal(err)
				}
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
			if err := ref.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				i := 0
				for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
					i++
				}
				t.Fatalf("%d bytes, arrow-go's writer %d; first difference at byte %d", got.Len(), want.Len(), i)
			}
		})
	}
}
