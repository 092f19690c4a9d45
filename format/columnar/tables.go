package columnar

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// rowGroup is the number of rows per Parquet row group (and per Arrow
// record batch): the memory a writer holds is one group of columns.
const rowGroup = 1 << 16

// recordSink takes a table's record batches: a Parquet or an Arrow IPC
// file writer.
type recordSink interface {
	Write(arrow.RecordBatch) error
	Close() error
}

// table streams rows into a file, column by column, one record batch per
// rowGroup rows.
type table struct {
	sink      recordSink
	out       *bufio.Writer // between an Arrow IPC writer and the file
	format    string        // for errors
	rb        *array.RecordBuilder
	rows      int
	direct    bool   // Arrow IPC: large batches go out over their own columns (see writeDirect)
	stream    bool   // Arrow IPC stream: Flush sends the rows gathered
	noneValid []byte // validity bits of a column of nulls
}

// directRows is the fewest rows that go to an Arrow IPC file as a record
// batch of their own; fewer are gathered with the next ones into batches
// of rowGroup rows, as readers take many small batches slowly (a run of
// tracks gives a few thousand clusters a batch).
const directRows = 4096

// arrowBuffer is the buffer of the Arrow IPC writers, which write each
// column's buffers, their padding and the batch's metadata in calls of
// their own: a system call each without it, some tens a batch.
const arrowBuffer = 64 << 10

// writerOnly hides Close: the file writers close their sink, the caller
// owns it.
type writerOnly struct{ io.Writer }

// newParquetTable starts a Parquet file (see parquetProps).
func newParquetTable(w io.Writer, fields []arrow.Field) (*table, error) {
	schema := arrow.NewSchema(fields, nil)
	fw, err := newParquetSink(writerOnly{w}, schema, parquetProps(fields))
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	return &table{sink: fw, format: "parquet", rb: newRecordBuilder(schema)}, nil
}

// parquetPage is the size of a Parquet data page, a sixteenth of the
// format's usual megabyte: each column writer encodes and compresses a
// page in buffers of its own, new for every row group, and pages of a
// megabyte made them the largest part of a run's fresh memory.
const parquetPage = 64 << 10

// parquetProps are the writer properties of the tables (see
// parquetOptions), their memory reused from row group to row group: the
// encoders and the pages held until a row group is closed had taken fresh
// memory every time, a quarter of the time of a Parquet run in page
// faults and clearing.
func parquetProps(fields []arrow.Field) *parquet.WriterProperties {
	return parquet.NewWriterProperties(append(parquetOptions(fields), parquet.WithAllocator(&reusingAllocator{zero: true}))...)
}

// parquetOptions are the tables' choices of format. Snappy, the format's
// usual default, writes several times faster than zstd here; dictionaries
// do not pay for measured values. Integers are delta-encoded and floats
// byte-stream-split (standard encodings that pyarrow and polars read): ids
// and times then cost almost nothing, files are 30 % smaller and written
// 15 % faster.
func parquetOptions(fields []arrow.Field) []parquet.WriterProperty {
	opts := append(snappyProps(), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(rowGroup), parquet.WithCreatedBy("hitflow"), parquet.WithDataPageSize(parquetPage))
	for _, f := range fields {
		switch f.Type.ID() {
		case arrow.INT64, arrow.INT32, arrow.UINT16:
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
		case arrow.FLOAT64, arrow.FLOAT32:
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.ByteStreamSplit))
		}
	}
	return opts
}

// newArrowTable starts an Arrow IPC file (Feather v2), uncompressed: the
// columns go to the file as they are in memory, which makes it the fastest
// format to write (and to read with pyarrow, polars or pandas).
func newArrowTable(w io.Writer, fields []arrow.Field) (*table, error) {
	schema := arrow.NewSchema(fields, nil)
	out := bufio.NewWriterSize(w, arrowBuffer)
	fw, err := ipc.NewFileWriter(out, ipc.WithSchema(schema))
	if err != nil {
		return nil, fmt.Errorf("arrow: %w", err)
	}
	return &table{sink: fw, out: out, format: "arrow", rb: newRecordBuilder(schema), direct: true}, nil
}

// newArrowStreamTable starts an Arrow IPC stream, which a reader takes
// batch by batch as it comes (pyarrow.ipc.open_stream): the format of a
// live run's output on a pipe. Flush sends the rows gathered so far.
func newArrowStreamTable(w io.Writer, fields []arrow.Field) (*table, error) {
	schema := arrow.NewSchema(fields, nil)
	out := bufio.NewWriterSize(w, arrowBuffer)
	return &table{sink: ipc.NewWriter(out, ipc.WithSchema(schema)), out: out, format: "arrow stream",
		rb: newRecordBuilder(schema), direct: true, stream: true}, nil
}

// newArrow starts an Arrow IPC stream or file.
func newArrow(w io.Writer, fields []arrow.Field, stream bool) (*table, error) {
	if stream {
		return newArrowStreamTable(w, fields)
	}
	return newArrowTable(w, fields)
}

// newRecordBuilder returns a builder whose columns reuse the memory of the
// batches already written.
func newRecordBuilder(schema *arrow.Schema) *array.RecordBuilder {
	rb := array.NewRecordBuilder(&reusingAllocator{}, schema)
	rb.Reserve(rowGroup)
	return rb
}

// added counts n rows appended to every column and writes a batch when
// one is full.
func (t *table) added(n int) error {
	t.rows += n
	if t.rows >= rowGroup {
		return t.flush()
	}
	return nil
}

func (t *table) flush() error {
	if t.rows == 0 {
		return nil
	}
	rec := t.rb.NewRecordBatch()
	defer rec.Release()
	// One allocation of the final size per column rather than a chain of
	// doublings, each copying what it holds.
	t.rb.Reserve(rowGroup)
	t.rows = 0
	if err := t.sink.Write(rec); err != nil {
		return fmt.Errorf("%s: %w", t.format, err)
	}
	return nil
}

// sendsDirect reports whether n rows go out over their own columns.
func (t *table) sendsDirect(n int) bool { return t.direct && n >= directRows }

// writeDirect writes n rows, after those gathered so far, as a record
// batch over the given columns (which it releases): the file writer
// copies them once, into the file, rather than the builders first.
func (t *table) writeDirect(cols []arrow.Array, n int) error {
	if err := t.flush(); err != nil {
		return err
	}
	rec := array.NewRecordBatch(t.rb.Schema(), cols, int64(n))
	for _, col := range cols {
		col.Release()
	}
	defer rec.Release()
	if err := t.sink.Write(rec); err != nil {
		return fmt.Errorf("%s: %w", t.format, err)
	}
	return nil
}

// column is an array of n values without nulls over the given bytes.
func column(t arrow.DataType, n int, values []byte) arrow.Array {
	d := array.NewData(t, n, []*memory.Buffer{nil, memory.NewBufferBytes(values)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// nullColumn is an array of n nulls over the given bytes (values the
// format needs, not read), or of the values when valid.
func (t *table) nullColumn(typ arrow.DataType, n int, values []byte, valid bool) arrow.Array {
	if valid {
		return column(typ, n, values)
	}
	bytes := int(bitutil.BytesForBits(int64(n)))
	t.noneValid = slices.Grow(t.noneValid[:0], bytes)[:bytes]
	clear(t.noneValid)
	d := array.NewData(typ, n, []*memory.Buffer{memory.NewBufferBytes(t.noneValid), memory.NewBufferBytes(values)}, nil, n, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// Flush sends the rows gathered to a stream; to a file, whose readers
// wait for its footer, it does nothing.
func (t *table) Flush() error {
	if !t.stream {
		return nil
	}
	if err := t.flush(); err != nil {
		return err
	}
	return t.flushOut()
}

// flushOut writes what the buffer between an Arrow IPC writer and the
// file holds.
func (t *table) flushOut() error {
	if t.out == nil {
		return nil
	}
	if err := t.out.Flush(); err != nil {
		return fmt.Errorf("%s: %w", t.format, err)
	}
	return nil
}

// Close writes the last rows and the footer.
func (t *table) Close() error {
	err := t.flush()
	t.rb.Release()
	if cerr := t.sink.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", t.format, cerr)
	}
	if ferr := t.flushOut(); err == nil {
		err = ferr
	}
	return err
}

func field(name string, t arrow.DataType) arrow.Field { return arrow.Field{Name: name, Type: t} }

func nullable(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// ClusterFields are the columns of the cluster table, as the CSV
// columns; energy_kev is null when uncalibrated.
var ClusterFields = []arrow.Field{
	field("id", arrow.PrimitiveTypes.Int64), field("size", arrow.PrimitiveTypes.Int32),
	field("toa_ns", arrow.PrimitiveTypes.Float64), field("span_ns", arrow.PrimitiveTypes.Float64),
	field("tot_sum", arrow.PrimitiveTypes.Int64), nullable("energy_kev", arrow.PrimitiveTypes.Float64),
	field("x", arrow.PrimitiveTypes.Float64), field("y", arrow.PrimitiveTypes.Float64),
	field("xmin", arrow.PrimitiveTypes.Uint16), field("xmax", arrow.PrimitiveTypes.Uint16),
	field("ymin", arrow.PrimitiveTypes.Uint16), field("ymax", arrow.PrimitiveTypes.Uint16),
	field("max", arrow.PrimitiveTypes.Float64),
}

// ShapeFields are the morphology columns of the clusters (see
// pixel.Clusters.HasShapes), after ClusterFields in a table that has them;
// the class by name.
var ShapeFields = []arrow.Field{
	field("pixels", arrow.PrimitiveTypes.Int32), field("inner", arrow.PrimitiveTypes.Int32),
	field("roundness", arrow.PrimitiveTypes.Float64), field("linearity", arrow.PrimitiveTypes.Float64),
	field("length", arrow.PrimitiveTypes.Float64), field("width", arrow.PrimitiveTypes.Float64),
	field("class", arrow.BinaryTypes.String),
}

// TOFFields are the time-of-flight columns of the clusters (see
// pixel.Clusters.HasTOF), null before the first pulse, after the others;
// FlightFields the neutron energy and wavelength of a flight path after
// them (null for a time of flight of zero too).
var (
	TOFFields    = []arrow.Field{nullable("tof_ns", arrow.PrimitiveTypes.Float64), nullable("pulse", arrow.PrimitiveTypes.Int64)}
	FlightFields = []arrow.Field{nullable("energy_ev", arrow.PrimitiveTypes.Float64), nullable("wavelength_a", arrow.PrimitiveTypes.Float64)}
)

// Options choose how a table is written.
type Options struct {
	Stream bool // Arrow: an IPC stream, which a reader takes batch by batch, rather than a file
	Shapes bool // clusters: the morphology columns too (ShapeFields)
	TOF    bool // clusters: the time of flight (TOFFields)
	// FlightPath, with TOF, is the flight path in metres: FlightFields
	// follow.
	FlightPath float64
}

// ClusterTable writes one row per cluster into a Parquet or Arrow file.
type ClusterTable struct {
	t        *table
	shapes   bool
	tof      bool
	path     float64   // flight path, m; 0 for none
	ns, span []float64 // scratch
	offsets  []int32   // scratch of the class column
	names    []byte
	// Scratch of the time-of-flight columns and their validity.
	tofNs, energy, wavelength []float64
	has, flies                []bool
	valid, flying             []byte
}

// clusterFields are the columns of a clusters table.
func clusterFields(o Options) []arrow.Field {
	f := slices.Clip(ClusterFields)
	if o.Shapes {
		f = append(f, ShapeFields...)
	}
	if o.TOF {
		f = append(f, TOFFields...)
		if o.FlightPath > 0 {
			f = append(f, FlightFields...)
		}
	}
	return f
}

// newClusterTable is the writer of the table t with the options.
func newClusterTable(t *table, o Options) *ClusterTable {
	c := &ClusterTable{t: t, shapes: o.Shapes, tof: o.TOF}
	if o.TOF {
		c.path = max(o.FlightPath, 0)
	}
	return c
}

// NewClusterParquet returns a streaming Parquet cluster writer.
func NewClusterParquet(w io.Writer, o Options) (*ClusterTable, error) {
	t, err := newParquetTable(w, clusterFields(o))
	return newClusterTable(t, o), err
}

// NewClusterArrow returns an Arrow IPC cluster writer, with the columns
// of the Parquet one: a file, or a stream for a reader taking the batches
// as they come.
func NewClusterArrow(w io.Writer, o Options) (*ClusterTable, error) {
	t, err := newArrow(w, clusterFields(o), o.Stream)
	return newClusterTable(t, o), err
}

func (c *ClusterTable) NeedsMembers() bool { return c.shapes }

// Write appends the clusters; to an Arrow IPC file, a large batch over
// its own columns (see writeDirect).
func (c *ClusterTable) Write(cl *pixel.Clusters) error {
	n := cl.Len()
	if c.shapes && !cl.HasShapes() {
		return fmt.Errorf("%s: the clusters carry no morphology columns (see pixel/analysis)", c.t.format)
	}
	if c.tof && !cl.HasTOF() {
		return fmt.Errorf("%s: the clusters carry no time of flight (see pixel/analysis)", c.t.format)
	}
	c.ns, c.span = c.ns[:0], c.span[:0]
	for i := range n {
		c.ns = append(c.ns, cl.FirstToA[i].Ns())
		c.span = append(c.span, (cl.LastToA[i] - cl.FirstToA[i]).Ns())
	}
	if c.t.sendsDirect(n) {
		return c.t.writeDirect(c.columns(cl), n)
	}
	f := c.t.rb.Fields()
	f[0].(*array.Int64Builder).AppendValues(cl.ID, nil)
	f[1].(*array.Int32Builder).AppendValues(cl.Size, nil)
	f[2].(*array.Float64Builder).AppendValues(c.ns, nil)
	f[3].(*array.Float64Builder).AppendValues(c.span, nil)
	f[4].(*array.Int64Builder).AppendValues(cl.ToTSum, nil)
	if cl.Calibrated {
		f[5].(*array.Float64Builder).AppendValues(cl.ESum, nil)
	} else {
		f[5].AppendNulls(n)
	}
	f[6].(*array.Float64Builder).AppendValues(cl.X, nil)
	f[7].(*array.Float64Builder).AppendValues(cl.Y, nil)
	f[8].(*array.Uint16Builder).AppendValues(cl.XMin, nil)
	f[9].(*array.Uint16Builder).AppendValues(cl.XMax, nil)
	f[10].(*array.Uint16Builder).AppendValues(cl.YMin, nil)
	f[11].(*array.Uint16Builder).AppendValues(cl.YMax, nil)
	f[12].(*array.Float64Builder).AppendValues(cl.Max, nil)
	if c.shapes {
		f[13].(*array.Int32Builder).AppendValues(cl.Pixels, nil)
		f[14].(*array.Int32Builder).AppendValues(cl.Inner, nil)
		f[15].(*array.Float64Builder).AppendValues(cl.Roundness, nil)
		f[16].(*array.Float64Builder).AppendValues(cl.Linearity, nil)
		f[17].(*array.Float64Builder).AppendValues(cl.Length, nil)
		f[18].(*array.Float64Builder).AppendValues(cl.Width, nil)
		appendClasses(f[19].(*array.StringBuilder), cl.Class)
	}
	if c.tof {
		k := 13
		if c.shapes {
			k = 20
		}
		c.appendTOF(f[k:], cl)
	}
	return c.t.added(n)
}

// appendTOF appends the time-of-flight columns of cl to the builders of
// TOFFields (and FlightFields).
func (c *ClusterTable) appendTOF(f []array.Builder, cl *pixel.Clusters) {
	c.fillTOF(cl)
	f[0].(*array.Float64Builder).AppendValues(c.tofNs, c.has)
	f[1].(*array.Int64Builder).AppendValues(cl.Pulse, c.has)
	if c.path > 0 {
		f[2].(*array.Float64Builder).AppendValues(c.energy, c.flies)
		f[3].(*array.Float64Builder).AppendValues(c.wavelength, c.flies)
	}
}

// fillTOF computes the values of the time-of-flight columns of cl into
// scratch, with their validity: has where the cluster has a pulse, flies
// where it has an energy and wavelength too.
func (c *ClusterTable) fillTOF(cl *pixel.Clusters) {
	n := cl.Len()
	c.tofNs, c.has = slices.Grow(c.tofNs[:0], n)[:n], slices.Grow(c.has[:0], n)[:n]
	for i, p := range cl.Pulse {
		c.tofNs[i], c.has[i] = cl.TOF[i].Ns(), p >= 0
	}
	if c.path <= 0 {
		return
	}
	c.energy, c.wavelength = slices.Grow(c.energy[:0], n)[:n], slices.Grow(c.wavelength[:0], n)[:n]
	c.flies = slices.Grow(c.flies[:0], n)[:n]
	for i, p := range cl.Pulse {
		c.energy[i], c.wavelength[i], c.flies[i] = analysis.Neutron(cl.TOF[i], p, c.path)
	}
}

// appendClasses appends the names of the classes.
func appendClasses(b *array.StringBuilder, classes []uint8) {
	for _, k := range classes {
		b.Append(analysis.Class(k).String())
	}
}

// columns returns the clusters' columns, over their own memory.
func (c *ClusterTable) columns(cl *pixel.Clusters) []arrow.Array {
	n := cl.Len()
	cols := []arrow.Array{
		column(arrow.PrimitiveTypes.Int64, n, arrow.Int64Traits.CastToBytes(cl.ID)),
		column(arrow.PrimitiveTypes.Int32, n, arrow.Int32Traits.CastToBytes(cl.Size)),
		column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(c.ns)),
		column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(c.span)),
		column(arrow.PrimitiveTypes.Int64, n, arrow.Int64Traits.CastToBytes(cl.ToTSum)),
		c.t.nullColumn(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.ESum), cl.Calibrated),
		column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.X)),
		column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.Y)),
		column(arrow.PrimitiveTypes.Uint16, n, arrow.Uint16Traits.CastToBytes(cl.XMin)),
		column(arrow.PrimitiveTypes.Uint16, n, arrow.Uint16Traits.CastToBytes(cl.XMax)),
		column(arrow.PrimitiveTypes.Uint16, n, arrow.Uint16Traits.CastToBytes(cl.YMin)),
		column(arrow.PrimitiveTypes.Uint16, n, arrow.Uint16Traits.CastToBytes(cl.YMax)),
		column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.Max)),
	}
	if c.shapes {
		cols = append(cols,
			column(arrow.PrimitiveTypes.Int32, n, arrow.Int32Traits.CastToBytes(cl.Pixels)),
			column(arrow.PrimitiveTypes.Int32, n, arrow.Int32Traits.CastToBytes(cl.Inner)),
			column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.Roundness)),
			column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.Linearity)),
			column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.Length)),
			column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(cl.Width)),
			c.classColumn(cl.Class))
	}
	if c.tof {
		cols = append(cols, c.tofColumns(cl)...)
	}
	return cols
}

// tofColumns are the time-of-flight columns of cl over scratch buffers
// (see fillTOF). Builders, a call per value, cost a quarter of a run of
// small clusters.
func (c *ClusterTable) tofColumns(cl *pixel.Clusters) []arrow.Array {
	c.fillTOF(cl)
	n := cl.Len()
	valid, nulls := c.bitmap(&c.valid, c.has)
	cols := []arrow.Array{
		withNulls(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(c.tofNs), valid, nulls),
		withNulls(arrow.PrimitiveTypes.Int64, n, arrow.Int64Traits.CastToBytes(cl.Pulse), valid, nulls),
	}
	if c.path <= 0 {
		return cols
	}
	flying, nulls := c.bitmap(&c.flying, c.flies)
	return append(cols,
		withNulls(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(c.energy), flying, nulls),
		withNulls(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(c.wavelength), flying, nulls))
}

// bitmap sets the validity bits of ok into *bits, and counts the nulls.
func (c *ClusterTable) bitmap(bits *[]byte, ok []bool) ([]byte, int) {
	size := int(bitutil.BytesForBits(int64(len(ok))))
	*bits = slices.Grow((*bits)[:0], size)[:size]
	clear(*bits)
	nulls := 0
	for i, v := range ok {
		if v {
			bitutil.SetBit(*bits, i)
		} else {
			nulls++
		}
	}
	return *bits, nulls
}

// withNulls is an array of n values with the validity bits and nulls
// given, over the bytes.
func withNulls(t arrow.DataType, n int, values, valid []byte, nulls int) arrow.Array {
	d := array.NewData(t, n, []*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(values)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// classColumn is the column of the names of the classes, its buffers
// written directly: a builder's append per cluster cost more than the
// clusters' shapes.
func (c *ClusterTable) classColumn(classes []uint8) arrow.Array {
	c.offsets, c.names = append(c.offsets[:0], 0), c.names[:0]
	for _, k := range classes {
		c.names = append(c.names, classNames[k]...)
		c.offsets = append(c.offsets, int32(len(c.names)))
	}
	d := array.NewData(arrow.BinaryTypes.String, len(classes), []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.offsets)), memory.NewBufferBytes(c.names)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// classNames are the names of the classes, by number.
var classNames = func() []string {
	var names []string
	for _, k := range analysis.Classes {
		names = append(names, k.String())
	}
	return names
}()

// Flush sends the clusters written so far to a stream (see table.Flush).
func (c *ClusterTable) Flush() error { return c.t.Flush() }

func (c *ClusterTable) Close() error { return c.t.Close() }

// HitFields are the columns of the per-hit table.
var HitFields = []arrow.Field{
	field("x", arrow.PrimitiveTypes.Uint16), field("y", arrow.PrimitiveTypes.Uint16),
	field("toa_ns", arrow.PrimitiveTypes.Float64), field("tot", arrow.PrimitiveTypes.Uint16),
	nullable("energy_kev", arrow.PrimitiveTypes.Float32), field("cluster", arrow.PrimitiveTypes.Int64),
}

// HitTable writes every hit with its cluster id into a Parquet or Arrow
// file.
type HitTable struct {
	t   *table
	toa []float64 // a batch's times in ns
	ids []int64   // a batch's cluster ids, one per hit
	// Zero energies, the values under the nulls of a batch without
	// calibration.
	zeros []float32
}

// NewHitArrow returns an Arrow IPC writer of labelled hits, with the
// columns of the Parquet one: a file, or a stream (o.Stream).
func NewHitArrow(w io.Writer, o Options) (*HitTable, error) {
	t, err := newArrow(w, HitFields, o.Stream)
	return &HitTable{t: t}, err
}

// NewHitParquet returns a streaming Parquet writer of labelled hits.
func NewHitParquet(w io.Writer) (*HitTable, error) {
	t, err := newParquetTable(w, HitFields)
	return &HitTable{t: t}, err
}

// WriteMembers writes the hits of every cluster of c, each with its id.
// A batch of clusters goes to the columns at once: a call per cluster,
// a few hits each, cost more than the copying.
func (p *HitTable) WriteMembers(c *pixel.Clusters) error {
	if !c.HasMembers() {
		return fmt.Errorf("%s: %w", p.t.format, pixel.ErrNoMembers)
	}
	h := &c.Members
	n := h.Len()
	p.toa = p.toa[:0]
	for _, t := range h.ToA {
		p.toa = append(p.toa, t.Ns())
	}
	p.ids = p.ids[:0]
	for i, id := range c.ID {
		for range c.Start[i+1] - c.Start[i] {
			p.ids = append(p.ids, id)
		}
	}
	if p.t.sendsDirect(n) {
		e := h.E
		if !h.Calibrated() { // the column needs room for the nulls' values
			if len(p.zeros) < n {
				p.zeros = make([]float32, n)
			}
			e = p.zeros[:n]
		}
		return p.t.writeDirect([]arrow.Array{
			column(arrow.PrimitiveTypes.Uint16, n, arrow.Uint16Traits.CastToBytes(h.X)),
			column(arrow.PrimitiveTypes.Uint16, n, arrow.Uint16Traits.CastToBytes(h.Y)),
			column(arrow.PrimitiveTypes.Float64, n, arrow.Float64Traits.CastToBytes(p.toa)),
			column(arrow.PrimitiveTypes.Uint16, n, arrow.Uint16Traits.CastToBytes(h.ToT)),
			p.t.nullColumn(arrow.PrimitiveTypes.Float32, n, arrow.Float32Traits.CastToBytes(e), h.Calibrated()),
			column(arrow.PrimitiveTypes.Int64, n, arrow.Int64Traits.CastToBytes(p.ids)),
		}, n)
	}
	f := p.t.rb.Fields()
	f[0].(*array.Uint16Builder).AppendValues(h.X, nil)
	f[1].(*array.Uint16Builder).AppendValues(h.Y, nil)
	f[2].(*array.Float64Builder).AppendValues(p.toa, nil)
	f[3].(*array.Uint16Builder).AppendValues(h.ToT, nil)
	if h.Calibrated() {
		f[4].(*array.Float32Builder).AppendValues(h.E, nil)
	} else {
		f[4].AppendNulls(n)
	}
	f[5].(*array.Int64Builder).AppendValues(p.ids, nil)
	return p.t.added(n)
}

// Flush sends the hits written so far to a stream (see table.Flush).
func (p *HitTable) Flush() error { return p.t.Flush() }

func (p *HitTable) Close() error { return p.t.Close() }
