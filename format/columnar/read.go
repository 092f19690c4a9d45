package columnar

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/internal/damage"
	"github.com/hitflow/hitflow/internal/prefault"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// readParquet reads a Parquet file into an Arrow table and checks that it
// has the columns of fields.
func readParquet(name string, fields []arrow.Field) (arrow.Table, error) {
	rdr, fr, err := openParquet(name, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkColumns(name, tbl, fields); err != nil {
		tbl.Release()
		return nil, err
	}
	return tbl, nil
}

// openParquet opens a Parquet file for reading as Arrow columns, without
// the Arrow schema a writer may store in the footer: arrow-go decodes it
// with the IPC reader, which trusts its counts (see arrowNotRead), and
// fuzzing found damaged footers that made it allocate 236 GB. The Parquet
// logical types give back every type hitflow writes. The columns and the
// pages read take their memory from mem.
func openParquet(name string, mem memory.Allocator) (*file.Reader, *pqarrow.FileReader, error) {
	props := parquet.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true
	// A page's sizes come from its header, which a damaged file can set to
	// arrow-go's limits of 64 and 256 MiB, for every column at once.
	// hitflow writes pages of 64 KiB, other writers about 1 MiB.
	props.MaxCompressedPageSize, props.MaxUncompressedPageSize = 16<<20, 64<<20
	rdr, err := file.OpenParquetFile(name, false, file.WithReadProps(props))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	md := rdr.MetaData()
	kept := md.FileMetaData.KeyValueMetadata[:0]
	for _, kv := range md.FileMetaData.KeyValueMetadata {
		if kv.Key != "ARROW:schema" {
			kept = append(kept, kv)
		}
	}
	md.FileMetaData.KeyValueMetadata = kept
	if err := checkChunks(name, md); err != nil {
		rdr.Close()
		return nil, nil, err
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{Parallel: true}, mem)
	if err != nil {
		rdr.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return rdr, fr, nil
}

// checkChunks checks that every column chunk of the footer lies within
// the file. arrow-go checks this only for files of old writers, and reads
// the columns on goroutines of its own, where a damaged length (fuzzing
// found a negative one) panics beyond any recover.
func checkChunks(name string, md *metadata.FileMetaData) error {
	size := md.GetSourceFileSize()
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		for c := range rg.NumColumns() {
			col, err := rg.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("%s: row group %d: %w", name, g, err)
			}
			start, n := col.DataPageOffset(), col.TotalCompressedSize()
			if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 {
				start = min(start, col.DictionaryPageOffset())
			}
			if start < 0 || n < 0 || start > size || n > size-start {
				return fmt.Errorf("%s: row group %d, column %d: %d bytes at byte %d, outside the file's %d", name, g, c, n, start, size)
			}
		}
	}
	return nil
}

// checkColumns reports a column of fields missing from the table, and
// columns of other lengths than the table's: arrow-go takes a Parquet
// table's length from its first column and only checks that the others
// are not shorter, so a damaged file can give longer ones.
func checkColumns(name string, tbl arrow.Table, fields []arrow.Field) error {
	for i := range int(tbl.NumCols()) {
		if c := tbl.Column(i); int64(c.Len()) != tbl.NumRows() {
			return fmt.Errorf("%s: column %s has %d rows, the table %d", name, c.Name(), c.Len(), tbl.NumRows())
		}
	}
	if want, ok := missing(tbl, fields); ok {
		return fmt.Errorf("%s: no column %s of type %s", name, want.Name, want.Type)
	}
	return nil
}

// missing returns the first of fields that the table lacks (or has with
// another type), if any.
func missing(tbl arrow.Table, fields []arrow.Field) (arrow.Field, bool) {
	for _, want := range fields {
		idx := tbl.Schema().FieldIndices(want.Name)
		if len(idx) != 1 || !arrow.TypeEqual(tbl.Schema().Field(idx[0]).Type, want.Type) {
			return want, true
		}
	}
	return arrow.Field{}, false
}

// eachChunk calls fn with every chunk of the named column.
func eachChunk(tbl arrow.Table, col string, fn func(a arrow.Array)) {
	for _, c := range tbl.Column(tbl.Schema().FieldIndices(col)[0]).Data().Chunks() {
		fn(c)
	}
}

// ClustersFromTable converts a table with the columns of [ClusterFields]
// (read from Parquet or Arrow), checked first; name is for messages.
func ClustersFromTable(name string, tbl arrow.Table) (*pixel.Clusters, error) {
	c := &pixel.Clusters{}
	if err := clustersInto(c, name, tbl); err != nil {
		return nil, err
	}
	return c, nil
}

// clustersInto sets c to the clusters of tbl, over c's storage.
func clustersInto(c *pixel.Clusters, name string, tbl arrow.Table) error {
	if err := checkColumns(name, tbl, ClusterFields); err != nil {
		return err
	}
	c.Reset()
	c.Calibrated = false
	eachChunk(tbl, "id", func(a arrow.Array) { c.ID = append(c.ID, a.(*array.Int64).Int64Values()...) })
	eachChunk(tbl, "size", func(a arrow.Array) { c.Size = append(c.Size, a.(*array.Int32).Int32Values()...) })
	eachChunk(tbl, "toa_ns", func(a arrow.Array) {
		for _, v := range a.(*array.Float64).Float64Values() {
			c.FirstToA = append(c.FirstToA, pixel.TimeFromNs(v))
		}
	})
	i := 0
	eachChunk(tbl, "span_ns", func(a arrow.Array) {
		for _, v := range a.(*array.Float64).Float64Values() {
			c.LastToA = append(c.LastToA, c.FirstToA[i]+pixel.TimeFromNs(v))
			i++
		}
	})
	eachChunk(tbl, "tot_sum", func(a arrow.Array) { c.ToTSum = append(c.ToTSum, a.(*array.Int64).Int64Values()...) })
	eachChunk(tbl, "energy_kev", func(a arrow.Array) {
		c.Calibrated = a.NullN() == 0 && a.Len() > 0
		c.ESum = append(c.ESum, a.(*array.Float64).Float64Values()...)
	})
	if !c.Calibrated {
		clear(c.ESum)
	}
	f64 := func(col string, dst *[]float64) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Float64).Float64Values()...) })
	}
	u16 := func(col string, dst *[]uint16) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Uint16).Uint16Values()...) })
	}
	f64("x", &c.X)
	f64("y", &c.Y)
	u16("xmin", &c.XMin)
	u16("xmax", &c.XMax)
	u16("ymin", &c.YMin)
	u16("ymax", &c.YMax)
	f64("max", &c.Max)
	if _, lacks := missing(tbl, ShapeFields); !lacks {
		i32 := func(col string, dst *[]int32) {
			eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Int32).Int32Values()...) })
		}
		i32("pixels", &c.Pixels)
		i32("inner", &c.Inner)
		f64("roundness", &c.Roundness)
		f64("linearity", &c.Linearity)
		f64("length", &c.Length)
		f64("width", &c.Width)
		var err error
		eachChunk(tbl, "class", func(a arrow.Array) {
			s := a.(*array.String)
			for i := range s.Len() {
				k, cerr := analysis.ParseClass(s.Value(i))
				if cerr != nil && err == nil {
					err = fmt.Errorf("%s: cluster %d: %w", name, len(c.Class), cerr)
				}
				c.Class = append(c.Class, uint8(k))
			}
		})
		if err != nil {
			return err
		}
	}
	if _, lacks := missing(tbl, TOFFields); !lacks {
		eachChunk(tbl, "tof_ns", func(a arrow.Array) {
			for _, v := range a.(*array.Float64).Float64Values() {
				c.TOF = append(c.TOF, pixel.TimeFromNs(v))
			}
		})
		eachChunk(tbl, "pulse", func(a arrow.Array) {
			p := a.(*array.Int64)
			for i := range p.Len() {
				if p.IsNull(i) {
					c.Pulse = append(c.Pulse, -1)
					c.TOF[len(c.Pulse)-1] = 0
				} else {
					c.Pulse = append(c.Pulse, p.Value(i))
				}
			}
		})
	}
	return nil
}

// HitsFromTable converts a table with the columns of [HitFields], checked
// first; name is for messages.
func HitsFromTable(name string, tbl arrow.Table) (*pixel.Labelled, error) {
	l := &pixel.Labelled{}
	calibrated, err := hitsInto(l, name, tbl)
	if err != nil {
		return nil, err
	}
	if !calibrated {
		l.Hits.E = nil
	}
	return l, nil
}

// hitsInto appends the hits of tbl, checked first, to l, and says whether
// all of them have an energy (the caller drops the energies otherwise).
func hitsInto(l *pixel.Labelled, name string, tbl arrow.Table) (calibrated bool, err error) {
	if err := checkColumns(name, tbl, HitFields); err != nil {
		return false, err
	}
	h := &l.Hits
	eachChunk(tbl, "x", func(a arrow.Array) { h.X = append(h.X, a.(*array.Uint16).Uint16Values()...) })
	eachChunk(tbl, "y", func(a arrow.Array) { h.Y = append(h.Y, a.(*array.Uint16).Uint16Values()...) })
	eachChunk(tbl, "toa_ns", func(a arrow.Array) {
		for _, v := range a.(*array.Float64).Float64Values() {
			h.ToA = append(h.ToA, pixel.TimeFromNs(v))
		}
	})
	eachChunk(tbl, "tot", func(a arrow.Array) { h.ToT = append(h.ToT, a.(*array.Uint16).Uint16Values()...) })
	calibrated = true
	eachChunk(tbl, "energy_kev", func(a arrow.Array) {
		if calibrated = calibrated && a.NullN() == 0; calibrated {
			h.E = append(h.E, a.(*array.Float32).Float32Values()...)
		}
	})
	eachChunk(tbl, "cluster", func(a arrow.Array) { l.Labels = append(l.Labels, a.(*array.Int64).Int64Values()...) })
	return calibrated, nil
}

// ReadClusters reads a Parquet or Arrow IPC file of [ClusterFields], a
// row group or record batch at a time (see scanTables) into columns sized
// once.
func ReadClusters(name string) (c *pixel.Clusters, err error) {
	defer damage.Recover(name, &err)
	c = &pixel.Clusters{}
	c.Reset()
	var g pixel.Clusters
	err = scanTables(name, func(rows, size int64) {
		c.Grow(int(min(rows, size/8))) // hitflow's files: 20 bytes or more a cluster
	}, func(tbl arrow.Table) error {
		if err := clustersInto(&g, name, tbl); err != nil {
			return err
		}
		c.Append(&g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ScanClusters reads a Parquet or Arrow IPC file of [ClusterFields] a row
// group or record batch at a time: fn gets the clusters of each, valid
// during the call (their storage, and that of the columns read, serves
// the next); an error of fn ends the reading and is returned.
func ScanClusters(name string, fn func(*pixel.Clusters) error) (err error) {
	defer damage.Recover(name, &err)
	var c pixel.Clusters
	return scanTables(name, nil, func(tbl arrow.Table) error {
		if err := clustersInto(&c, name, tbl); err != nil {
			return err
		}
		return fn(&c)
	})
}

// isArrow says whether the file is named as an Arrow IPC file (.arrow),
// not a Parquet one.
func isArrow(name string) bool { return strings.EqualFold(filepath.Ext(name), ".arrow") }

// scanTables reads a Parquet file a row group at a time (see
// scanRowGroups), or an Arrow IPC file or stream a record batch at a time,
// the memory of the columns reused from one to the next. sized, when not
// nil, gets the rows a Parquet footer gives (of an Arrow file, the most
// its bytes can hold) and the file's size first, for a reader that sizes
// its columns once: columns grown by appending take fresh memory at every
// step, and a compare of two Arrow label files of 2 x 10^7 hits took 18 s
// that way, 6 s sized. fn gets each part as a table, valid during the
// call; an error of fn ends the reading.
func scanTables(name string, sized func(rows, size int64), fn func(arrow.Table) error) error {
	if !isArrow(name) {
		return scanRowGroups(name, sized, fn)
	}
	r, err := openIPC(name)
	if err != nil {
		return err
	}
	defer r.Close()
	if sized != nil {
		sized(r.MaxRows(), r.Size())
	}
	for {
		rec, err := r.next(false)
		if err != nil || rec == nil {
			return err
		}
		tbl := array.NewTableFromRecords(r.schema, []arrow.RecordBatch{rec})
		rec.Release()
		err = fn(tbl)
		tbl.Release()
		if err != nil {
			return err
		}
	}
}

// scanRowGroups reads a Parquet file a row group at a time, the memory of
// its columns reused from one to the next: the whole table and its
// copies had held a file several times over. sized, when not nil, gets
// the rows the footer gives and the file's size first, for a reader that
// sizes its columns once: a damaged footer may claim any number of rows,
// the size bounds what the file can hold. fn gets each row group as a
// table, valid during the call; an error of fn ends the reading.
func scanRowGroups(name string, sized func(rows, size int64), fn func(arrow.Table) error) error {
	rdr, fr, err := openParquet(name, &reusingAllocator{zero: true})
	if err != nil {
		return err
	}
	defer rdr.Close()
	if sized != nil {
		sized(max(rdr.NumRows(), 0), rdr.MetaData().GetSourceFileSize())
	}
	cols := make([]int, rdr.MetaData().Schema.NumColumns())
	for i := range cols {
		cols[i] = i
	}
	for g := range rdr.NumRowGroups() {
		tbl, err := fr.ReadRowGroups(context.Background(), cols, []int{g})
		if err != nil {
			return fmt.Errorf("%s: row group %d: %w", name, g, err)
		}
		err = fn(tbl)
		tbl.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadHits reads a Parquet or Arrow IPC file of [HitFields], a row group
// or record batch at a time (see scanTables) into columns sized once.
func ReadHits(name string) (l *pixel.Labelled, err error) {
	defer damage.Recover(name, &err)
	l = &pixel.Labelled{}
	calibrated := true
	err = scanTables(name, func(rows, size int64) {
		n := int(min(rows, size/2)) // hitflow's files: 6 bytes or more a hit
		h := &l.Hits
		h.X, h.Y, h.ToA, h.ToT = prefault.Make[uint16](0, n), prefault.Make[uint16](0, n), prefault.Make[pixel.Time](0, n), prefault.Make[uint16](0, n)
		l.Labels = prefault.Make[int64](0, n)
	}, func(tbl arrow.Table) error {
		c, err := hitsInto(l, name, tbl)
		calibrated = calibrated && c
		return err
	})
	if err != nil {
		return nil, err
	}
	if !calibrated {
		l.Hits.E = nil
	}
	return l, nil
}

// ReadCLUE reads a Parquet file written by [WriteCLUEParquet] or an Arrow
// IPC file written by [WriteCLUEArrow].
func ReadCLUE(name string) (t *cluecsv.Table, r *clue.Result, err error) {
	defer damage.Recover(name, &err)
	var tbl arrow.Table
	if isArrow(name) {
		tbl, err = readIPC(name)
	} else {
		tbl, err = readParquet(name, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	defer tbl.Release()
	return CLUEFromTable(name, tbl)
}

// Kind says what a Parquet or Arrow IPC result file holds, "clusters",
// "hits" (HitFields) or "clue", from its schema, without reading the
// columns.
func Kind(name string) (kind string, err error) {
	defer damage.Recover(name, &err)
	var schema *arrow.Schema
	if isArrow(name) {
		r, err := openIPC(name)
		if err != nil {
			return "", err
		}
		defer r.Close()
		schema = r.schema
	} else {
		rdr, fr, err := openParquet(name, memory.DefaultAllocator)
		if err != nil {
			return "", err
		}
		defer rdr.Close()
		if schema, err = fr.Schema(); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(schema.FieldIndices("tot_sum")) > 0 {
		return "clusters", nil
	}
	if len(schema.FieldIndices("cluster")) > 0 && len(schema.FieldIndices("toa_ns")) > 0 {
		return "hits", nil
	}
	return "clue", nil
}
