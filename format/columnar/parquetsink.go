package columnar

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetSink writes each record batch as a Parquet row group whose
// columns are encoded on several goroutines: arrow-go's file writer
// (pqarrow.FileWriter) encodes them one after the other, and for small
// clusters (gamma rays) that made its goroutine the bound of a whole run,
// with the other core half idle. The columns of a buffered row group have
// writers of their own, each encoding into its own pages in memory, so
// they can be filled at the same time; closing the row group then writes
// the pages to the file in column order. The file has the same bytes as
// pqarrow.FileWriter makes of the same batches (a test checks it).
type parquetSink struct {
	w        *file.Writer
	nullable []bool
	encoders []columnEncoder // one per goroutine
}

// columnEncoder is a goroutine's state: Arrow's write context (its
// scratch buffers are not shared) and definition levels of nullable
// columns.
type columnEncoder struct {
	ctx    context.Context
	levels []int16
}

// newParquetSink starts a Parquet file with the given schema and writer
// properties; the Arrow schema is stored in the file's metadata, as
// pqarrow.WithStoreSchema does, so that readers restore its types.
func newParquetSink(w io.Writer, schema *arrow.Schema, props *parquet.WriterProperties) (*parquetSink, error) {
	arrowProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	pqSchema, err := pqarrow.ToParquet(schema, props, arrowProps)
	if err != nil {
		return nil, err
	}
	meta := metadata.KeyValueMetadata{}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(schema, props.Allocator())))
	fw, err := file.NewParquetWriterWithError(w, pqSchema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	s := &parquetSink{w: fw, encoders: make([]columnEncoder, min(runtime.GOMAXPROCS(0), schema.NumFields()))}
	for _, f := range schema.Fields() {
		s.nullable = append(s.nullable, f.Nullable)
	}
	for i := range s.encoders {
		s.encoders[i].ctx = pqarrow.NewArrowWriteContext(context.Background(), &arrowProps)
	}
	return s, nil
}

// Write writes rec as row groups of at most the properties' length.
func (s *parquetSink) Write(rec arrow.RecordBatch) error {
	most := s.w.Properties().MaxRowGroupLength()
	if rec.NumRows() <= most {
		return s.writeGroup(rec)
	}
	for i := int64(0); i < rec.NumRows(); i += most {
		part := rec.NewSlice(i, min(i+most, rec.NumRows()))
		err := s.writeGroup(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// writeGroup writes rec as one row group.
func (s *parquetSink) writeGroup(rec arrow.RecordBatch) error {
	rgw, err := s.w.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	cols := rec.Columns()
	var next atomic.Int64 // the next column to encode
	errs := make([]error, len(s.encoders))
	var wg sync.WaitGroup
	for g := 1; g < len(s.encoders); g++ {
		wg.Go(func() { errs[g] = s.encoders[g].encode(rgw, cols, s.nullable, &next) })
	}
	errs[0] = s.encoders[0].encode(rgw, cols, s.nullable, &next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return rgw.Close()
}

// encode encodes columns of the row group, taking the next one not yet
// taken until none is left.
func (e *columnEncoder) encode(rgw file.BufferedRowGroupWriter, cols []arrow.Array, nullable []bool, next *atomic.Int64) error {
	for i := int(next.Add(1) - 1); i < len(cols); i = int(next.Add(1) - 1) {
		cw, err := rgw.Column(i)
		if err != nil {
			return err
		}
		var levels []int16 // nil: every value present, the column not nullable
		if nullable[i] {
			levels = e.definitionLevels(cols[i])
		}
		if err := pqarrow.WriteArrowToColumn(e.ctx, cw, cols[i], levels, nil, nullable[i]); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
		// The last page too is encoded and compressed here, not when the
		// row group is closed: that writes the pages, one column after
		// the other.
		if f, ok := cw.(interface{ FlushBufferedDataPages() error }); ok {
			if err := f.FlushBufferedDataPages(); err != nil {
				return fmt.Errorf("column %d: %w", i, err)
			}
		}
	}
	return nil
}

// definitionLevels are the Parquet definition levels of a nullable
// top-level column: 1 where a value is present, 0 for a null. A column
// with no nulls or only nulls (the energies of a batch, calibrated or
// not) is filled without a look at each value.
func (e *columnEncoder) definitionLevels(col arrow.Array) []int16 {
	e.levels = slices.Grow(e.levels[:0], col.Len())[:col.Len()]
	switch col.NullN() {
	case 0:
		for i := range e.levels {
			e.levels[i] = 1
		}
	case col.Len():
		clear(e.levels)
	default:
		for i := range e.levels {
			e.levels[i] = 0
			if col.IsValid(i) {
				e.levels[i] = 1
			}
		}
	}
	return e.levels
}

// Close writes the footer.
func (s *parquetSink) Close() error { return s.w.Close() }
