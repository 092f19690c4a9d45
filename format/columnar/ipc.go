package columnar

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The Arrow IPC files and streams hitflow writes are read back here, in
// this process, without arrow-go's IPC reader: that reader sizes its
// allocations by counts in the file, and fuzzing found a damaged count
// that made it allocate 300 GB, a crash no recover catches. This reader
// checks every count and size against the bytes that hold it before it
// allocates: a message's metadata and body against the file's size, the
// offsets and vectors of the metadata's flatbuffers against the metadata,
// a column's buffers against the body and the batch's length. It reads
// the columns hitflow writes (integers, floats, booleans and UTF-8
// strings, nullable or not, uncompressed, without dictionaries) and makes
// arrow-go arrays over the body's bytes, which the converters of the
// Parquet readers then take.

// Arrow's framing: a file begins and ends with the magic; a stream's
// messages each begin with the continuation marker (older writers left
// it out) and the length of the metadata, 0 at the end of the stream.
var arrowMagic = []byte("ARROW1")

const ipcContinuation = 0xFFFFFFFF

// maxIPCMeta bounds a message's metadata: hitflow's schemas take a few
// KiB, so that a damaged length cannot ask for gigabytes of metadata.
const maxIPCMeta = 16 << 20

// The message headers and column types of Arrow's Message.fbs and
// Schema.fbs that this reader knows.
const (
	ipcSchema          = 1
	ipcDictionaryBatch = 2
	ipcRecordBatch     = 3

	ipcTypeInt   = 2
	ipcTypeFloat = 3
	ipcTypeUtf8  = 5
	ipcTypeBool  = 6

	ipcV4 = 3 // MetadataVersion.V4, the first of the current format
	ipcV5 = 4
)

// ipcReader reads the record batches of an Arrow IPC file or stream.
type ipcReader struct {
	name   string
	f      *os.File
	r      *bufio.Reader
	pos    int64 // the file's byte at r's next
	end    int64 // where the messages end: a file's footer, a stream's end
	file   bool  // the file format, not a stream
	schema *arrow.Schema
	meta   []byte
	body   []byte
}

// openIPC opens an Arrow IPC file or stream and reads its schema.
func openIPC(name string) (*ipcReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	r := &ipcReader{name: name, f: f}
	if err := r.start(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *ipcReader) Close() error { return r.f.Close() }

// damaged is the error for what the file holds at byte pos.
func (r *ipcReader) damaged(pos int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s", r.name, pos, fmt.Sprintf(format, args...))
}

// start tells a file from a stream, finds where the messages end and reads
// the schema.
func (r *ipcReader) start() error {
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	r.end = st.Size()
	head := make([]byte, 8)
	n, err := io.ReadFull(r.f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.file = bytes.HasPrefix(head[:n], arrowMagic)
	if r.file {
		// The trailer: the footer's length and the magic again. The
		// footer's record batch index is not needed: the messages before
		// it are read in order.
		tail := make([]byte, 10)
		if r.end < int64(len(head)+len(tail)) {
			return r.damaged(r.end, "an Arrow file too short for its footer (truncated?)")
		}
		if _, err := r.f.ReadAt(tail, r.end-10); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		if !bytes.Equal(tail[4:], arrowMagic) {
			return r.damaged(r.end-6, "an Arrow file without its closing magic (truncated?)")
		}
		footer := int64(int32(binary.LittleEndian.Uint32(tail)))
		if footer < 0 || footer > r.end-10-8 {
			return r.damaged(r.end-10, "a footer of %d bytes in a file of %d", footer, r.end)
		}
		r.end -= 10 + footer
		r.pos = 8
	}
	if _, err := r.f.Seek(r.pos, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.r = bufio.NewReaderSize(r.f, 64<<10)
	if r.end == 0 {
		return fmt.Errorf("%s: an empty file, not an Arrow IPC file or stream", r.name)
	}
	typ, header, bodyLen, at, err := r.message()
	if err != nil {
		return err
	}
	if typ != ipcSchema {
		return r.damaged(at, "the first message is not a schema")
	}
	if bodyLen != 0 {
		return r.damaged(at, "a schema with a body of %d bytes", bodyLen)
	}
	r.schema, err = r.parseSchema(header, at)
	return err
}

// read fills b from the file.
func (r *ipcReader) read(b []byte) error {
	n, err := io.ReadFull(r.r, b)
	r.pos += int64(n)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.damaged(r.pos, "the file ends inside a message (truncated?)")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	return nil
}

// message reads the next message's metadata: its header's type (0 at the
// end of the stream), the header and the length of the body that follows;
// at is where the message began.
func (r *ipcReader) message() (typ uint8, header fbTable, bodyLen, at int64, err error) {
	at = r.pos
	if at == r.end {
		if r.file {
			return 0, fbTable{}, 0, at, nil // a file's end marker is optional before the footer
		}
		return 0, fbTable{}, 0, at, r.damaged(at, "the stream ends without its end marker (truncated?)")
	}
	var word [4]byte
	if err := r.read(word[:]); err != nil {
		return 0, fbTable{}, 0, at, err
	}
	size := binary.LittleEndian.Uint32(word[:])
	if size == ipcContinuation {
		if err := r.read(word[:]); err != nil {
			return 0, fbTable{}, 0, at, err
		}
		size = binary.LittleEndian.Uint32(word[:])
	}
	if size == 0 {
		return 0, fbTable{}, 0, at, nil
	}
	if int64(size) > r.end-r.pos || size > maxIPCMeta {
		return 0, fbTable{}, 0, at, r.damaged(at, "metadata of %d bytes, beyond the messages' end at byte %d", size, r.end)
	}
	if cap(r.meta) < int(size) {
		r.meta = make([]byte, size)
	}
	r.meta = r.meta[:size]
	if err := r.read(r.meta); err != nil {
		return 0, fbTable{}, 0, at, err
	}
	err = r.parse(at, func() {
		m := fbRoot(r.meta)
		if v := m.int16(0); v != ipcV4 && v != ipcV5 {
			panic(fbDamaged{fmt.Sprintf("metadata version %d (hitflow reads V4 and V5)", v)})
		}
		typ = m.uint8(1)
		header = m.table(2)
		bodyLen = m.int64(3)
	})
	if err != nil {
		return 0, fbTable{}, 0, at, err
	}
	if bodyLen < 0 || bodyLen > r.end-r.pos {
		return 0, fbTable{}, 0, at, r.damaged(at, "a body of %d bytes, beyond the messages' end at byte %d", bodyLen, r.end)
	}
	if typ == 0 {
		return 0, fbTable{}, 0, at, r.damaged(at, "a message without a header")
	}
	return typ, header, bodyLen, at, nil
}

// parse runs fn, which reads flatbuffers, and turns its fbDamaged panic
// into an error at the message of byte at.
func (r *ipcReader) parse(at int64, fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			d, ok := p.(fbDamaged)
			if !ok {
				panic(p)
			}
			err = r.damaged(at, "damaged message: %s", d.what)
		}
	}()
	fn()
	return nil
}

// parseSchema makes the schema of a Schema message.
func (r *ipcReader) parseSchema(s fbTable, at int64) (schema *arrow.Schema, err error) {
	var fields []arrow.Field
	err = r.parse(at, func() {
		if s.int16(0) != 0 {
			panic(fbDamaged{"big-endian data (hitflow reads little-endian)"})
		}
		start, n := s.vector(1, 4)
		fields = make([]arrow.Field, n)
		for i := range n {
			f := s.vectorTable(start, i)
			name := f.string(0)
			if _, ok := f.field(4); ok {
				panic(fbDamaged{fmt.Sprintf("column %q is dictionary-encoded (hitflow reads plain columns)", name)})
			}
			if _, k := f.vector(5, 4); k != 0 {
				panic(fbDamaged{fmt.Sprintf("column %q is nested (hitflow reads flat columns)", name)})
			}
			fields[i] = arrow.Field{Name: name, Nullable: f.bool(1), Type: ipcType(name, f.uint8(2), f.table(3))}
		}
	})
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(fields, nil), nil
}

// ipcType is the Arrow type of a column's Type union (t is absent, the
// zero fbTable, when the file leaves it out: its fields read as 0).
func ipcType(name string, kind uint8, t fbTable) arrow.DataType {
	switch kind {
	case ipcTypeInt:
		signed := t.bool(1)
		switch w := t.int32(0); {
		case w == 8 && signed:
			return arrow.PrimitiveTypes.Int8
		case w == 16 && signed:
			return arrow.PrimitiveTypes.Int16
		case w == 32 && signed:
			return arrow.PrimitiveTypes.Int32
		case w == 64 && signed:
			return arrow.PrimitiveTypes.Int64
		case w == 8:
			return arrow.PrimitiveTypes.Uint8
		case w == 16:
			return arrow.PrimitiveTypes.Uint16
		case w == 32:
			return arrow.PrimitiveTypes.Uint32
		case w == 64:
			return arrow.PrimitiveTypes.Uint64
		}
	case ipcTypeFloat:
		switch t.int16(0) {
		case 1:
			return arrow.PrimitiveTypes.Float32
		case 2:
			return arrow.PrimitiveTypes.Float64
		}
	case ipcTypeUtf8:
		return arrow.BinaryTypes.String
	case ipcTypeBool:
		return arrow.FixedWidthTypes.Boolean
	}
	panic(fbDamaged{fmt.Sprintf("column %q of a type hitflow does not read (type %d)", name, kind)})
}

// next reads the next record batch; nil at the end. The arrays lie over a
// body buffer that the next call reuses, unless fresh.
func (r *ipcReader) next(fresh bool) (arrow.RecordBatch, error) {
	typ, header, bodyLen, at, err := r.message()
	if err != nil || typ == 0 {
		return nil, err
	}
	switch typ {
	case ipcRecordBatch:
	case ipcSchema:
		return nil, r.damaged(at, "a second schema")
	case ipcDictionaryBatch:
		return nil, r.damaged(at, "a dictionary batch (hitflow reads plain columns)")
	default:
		return nil, r.damaged(at, "a message of type %d, not a record batch", typ)
	}
	if fresh || int64(cap(r.body)) < bodyLen {
		r.body = make([]byte, bodyLen)
	}
	body := r.body[:bodyLen]
	if err := r.read(body); err != nil {
		return nil, err
	}
	var rec arrow.RecordBatch
	err = r.parse(at, func() { rec = r.batch(header, body) })
	return rec, err
}

// batch makes the columns of a RecordBatch header over body, every
// buffer checked against the body and the batch's length first.
func (r *ipcReader) batch(h fbTable, body []byte) arrow.RecordBatch {
	rows := h.int64(0)
	nodes, nn := h.vector(1, 16)
	bufs, nb := h.vector(2, 16)
	if _, ok := h.field(3); ok {
		panic(fbDamaged{"compressed buffers (hitflow writes and reads them plain)"})
	}
	fields := r.schema.Fields()
	if rows < 0 || nn != len(fields) {
		panic(fbDamaged{fmt.Sprintf("a batch of %d rows and %d columns, the schema's %d", rows, nn, len(fields))})
	}
	next := 0
	buffer := func() []byte {
		if next >= nb {
			panic(fbDamaged{fmt.Sprintf("%d buffers, fewer than the columns need", nb)})
		}
		off, n := h.int64At(bufs+16*next), h.int64At(bufs+16*next+8)
		next++
		if off < 0 || n < 0 || off%8 != 0 || off > int64(len(body)) || n > int64(len(body))-off {
			panic(fbDamaged{fmt.Sprintf("a buffer of %d bytes at %d in a body of %d", n, off, len(body))})
		}
		return body[off : off+n]
	}
	cols := make([]arrow.Array, len(fields))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range fields {
		length, nulls := h.int64At(nodes+16*i), h.int64At(nodes+16*i+8)
		if length != rows || nulls < 0 || nulls > rows {
			panic(fbDamaged{fmt.Sprintf("column %q of %d rows and %d nulls in a batch of %d", f.Name, length, nulls, rows)})
		}
		// need checks that b holds the rows at perRow bytes each, or a
		// bit each when perRow is 0.
		need := func(b []byte, perRow int64, what string) {
			n := int64(len(b))
			if perRow == 0 && rows/8+min(rows%8, 1) > n || perRow > 0 && rows > n/perRow {
				panic(fbDamaged{fmt.Sprintf("column %q: %s of %d bytes for %d rows", f.Name, what, n, rows)})
			}
		}
		validity, values := buffer(), buffer()
		bs := []*memory.Buffer{nil, memory.NewBufferBytes(values)}
		if nulls > 0 {
			need(validity, 0, "a validity bitmap")
			bs[0] = memory.NewBufferBytes(validity)
		}
		switch t := f.Type.(type) {
		case *arrow.BooleanType:
			need(values, 0, "values")
		case *arrow.StringType:
			data := buffer()
			if rows > 0 {
				// rows+1 offsets, from 0 or more, never falling, within
				// the data.
				need(values[min(4, len(values)):], 4, "offsets")
				prev := int32(0)
				for k := range rows + 1 {
					o := int32(binary.LittleEndian.Uint32(values[4*k:]))
					if o < prev || int64(o) > int64(len(data)) {
						panic(fbDamaged{fmt.Sprintf("column %q: string offset %d of row %d below the one before or beyond the data's %d bytes", f.Name, o, k, len(data))})
					}
					prev = o
				}
			}
			bs = append(bs, memory.NewBufferBytes(data))
		case arrow.FixedWidthDataType:
			need(values, int64(t.BitWidth()/8), "values")
		}
		d := array.NewData(f.Type, int(rows), bs, nil, int(nulls), 0)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	return array.NewRecordBatch(r.schema, cols, rows)
}

// fbDamaged is the panic of a flatbuffer read out of its bytes, recovered
// by ipcReader.parse.
type fbDamaged struct{ what string }

// fbTable is a table of a flatbuffer: its position in b and its vtable's.
// Every read is checked against b; a bad offset panics with fbDamaged.
// The zero fbTable is an absent one.
type fbTable struct {
	b          []byte
	pos        int
	vt, vtSize int
}

func fbCheck(b []byte, pos, n int) {
	if pos < 0 || pos > len(b)-n {
		panic(fbDamaged{fmt.Sprintf("offset %d out of the metadata's %d bytes", pos, len(b))})
	}
}

func fbU32(b []byte, pos int) uint32 { fbCheck(b, pos, 4); return binary.LittleEndian.Uint32(b[pos:]) }

// fbRoot is the root table of a flatbuffer.
func fbRoot(b []byte) fbTable { return fbAt(b, int(fbU32(b, 0))) }

func fbAt(b []byte, pos int) fbTable {
	vt := pos - int(int32(fbU32(b, pos)))
	fbCheck(b, vt, 4)
	size := int(binary.LittleEndian.Uint16(b[vt:]))
	if size < 4 || size%2 != 0 {
		panic(fbDamaged{fmt.Sprintf("a vtable of %d bytes", size)})
	}
	fbCheck(b, vt, size)
	return fbTable{b: b, pos: pos, vt: vt, vtSize: size}
}

// field is where the slot's value is, and whether it is present.
func (t fbTable) field(slot int) (int, bool) {
	o := 4 + 2*slot
	if t.b == nil || o+2 > t.vtSize {
		return 0, false
	}
	off := int(binary.LittleEndian.Uint16(t.b[t.vt+o:]))
	if off == 0 {
		return 0, false
	}
	return t.pos + off, true
}

// The scalars of a slot; 0 (the schemas' defaults) when absent.
func (t fbTable) scalar(slot, n int) []byte {
	p, ok := t.field(slot)
	if !ok {
		return make([]byte, n)
	}
	fbCheck(t.b, p, n)
	return t.b[p : p+n]
}

func (t fbTable) bool(slot int) bool   { return t.scalar(slot, 1)[0] != 0 }
func (t fbTable) uint8(slot int) uint8 { return t.scalar(slot, 1)[0] }
func (t fbTable) int16(slot int) int16 { return int16(binary.LittleEndian.Uint16(t.scalar(slot, 2))) }
func (t fbTable) int32(slot int) int32 { return int32(binary.LittleEndian.Uint32(t.scalar(slot, 4))) }
func (t fbTable) int64(slot int) int64 { return int64(binary.LittleEndian.Uint64(t.scalar(slot, 8))) }

// int64At reads a struct's field at pos.
func (t fbTable) int64At(pos int) int64 {
	fbCheck(t.b, pos, 8)
	return int64(binary.LittleEndian.Uint64(t.b[pos:]))
}

// table is the table a slot refers to; the zero fbTable when absent.
func (t fbTable) table(slot int) fbTable {
	p, ok := t.field(slot)
	if !ok {
		return fbTable{}
	}
	return fbAt(t.b, p+int(fbU32(t.b, p)))
}

// vector is where a slot's vector of elements of size bytes begins, and
// its length, checked to lie within the flatbuffer.
func (t fbTable) vector(slot, size int) (start, n int) {
	p, ok := t.field(slot)
	if !ok {
		return 0, 0
	}
	v := p + int(fbU32(t.b, p))
	n = int(fbU32(t.b, v))
	if n > (len(t.b)-v-4)/size {
		panic(fbDamaged{fmt.Sprintf("a vector of %d elements in %d bytes", n, len(t.b)-v-4)})
	}
	return v + 4, n
}

// vectorTable is the i-th table of a vector of tables at start.
func (t fbTable) vectorTable(start, i int) fbTable {
	p := start + 4*i
	return fbAt(t.b, p+int(fbU32(t.b, p)))
}

func (t fbTable) string(slot int) string {
	start, n := t.vector(slot, 1)
	return string(t.b[start : start+n])
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
