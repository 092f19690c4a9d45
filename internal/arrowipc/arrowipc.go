// Package arrowipc reads Arrow IPC files and streams of flat columns
// (integers, floats, booleans and UTF-8 strings, nullable or not,
// uncompressed, without dictionaries: what hitflow writes) into their
// columns' bytes, checking every count and size against the bytes that
// hold it before it allocates: a message's metadata and body against the
// file's size, the offsets and vectors of the metadata's flatbuffers
// against the metadata, a column's buffers against the body and the
// batch's length. A damaged or foreign file is an error naming it and
// the byte of the message that is wrong.
//
// arrow-go's IPC reader sizes its allocations by counts in the file, and
// fuzzing found a damaged count that made it allocate 300 GB, a crash no
// recover catches; hence this reader. It knows nothing of arrow-go, so
// that its fuzzing is not slowed by the instrumentation of arrow-go's
// code; format/columnar makes arrow-go arrays over the bytes.
package arrowipc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Arrow's framing: a file begins and ends with the magic; a stream's
// messages each begin with the continuation marker (older writers left
// it out) and the length of the metadata, 0 at the end of the stream.
var magic = []byte("ARROW1")

const continuation = 0xFFFFFFFF

// maxMeta bounds a message's metadata: hitflow's schemas take a few KiB,
// so that a damaged length cannot ask for gigabytes of metadata.
const maxMeta = 16 << 20

// The message headers and column types of Arrow's Message.fbs and
// Schema.fbs that this reader knows.
const (
	msgSchema          = 1
	msgDictionaryBatch = 2
	msgRecordBatch     = 3

	typeInt   = 2
	typeFloat = 3
	typeUtf8  = 5
	typeBool  = 6

	v4 = 3 // MetadataVersion.V4, the first of the current format
	v5 = 4
)

// Kind is a column's type.
type Kind uint8

const (
	Int Kind = iota
	Uint
	Float
	Bool
	Utf8
)

// Field is a column of the schema.
type Field struct {
	Name     string
	Nullable bool
	Kind     Kind
	Bits     int // of Int, Uint and Float: 8, 16, 32 or 64 (Float 32 or 64)
}

// Column is a column of a batch, its buffers checked against the batch's
// rows: Validity holds a bit a row when Nulls > 0 (nil otherwise);
// Values a bit (Bool), Bits/8 bytes (numbers) or 4 bytes plus 4 (Utf8's
// offsets, rising from 0 or more, into Data) a row.
type Column struct {
	Nulls    int
	Validity []byte
	Values   []byte
	Data     []byte
}

// Batch is a record batch: its rows and a Column for every Field.
type Batch struct {
	Rows    int
	Columns []Column
}

// Reader reads the record batches of an Arrow IPC file or stream.
type Reader struct {
	Fields []Field

	name string
	src  io.ReaderAt
	f    *os.File // of Open, closed by Close
	r    *bufio.Reader
	size int64 // of the file
	pos  int64 // the file's byte at r's next
	end  int64 // where the messages end: a file's footer, a stream's end
	file bool  // the file format, not a stream
	meta []byte
	body []byte
}

// Open opens an Arrow IPC file or stream and reads its schema.
func Open(name string) (*Reader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := NewReader(name, f, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// NewReader reads the schema of the Arrow IPC file or stream of size bytes
// in src; name is for messages.
func NewReader(name string, src io.ReaderAt, size int64) (*Reader, error) {
	r := &Reader{name: name, src: src, size: size, end: size}
	if err := r.start(); err != nil {
		return nil, err
	}
	return r, nil
}

// Size is the file's size.
func (r *Reader) Size() int64 { return r.size }

// MaxRows bounds the rows of all the batches together: the messages'
// bytes over a row's bytes by the schema (a string's offset counted, a
// boolean not), for readers that size their columns once.
func (r *Reader) MaxRows() int64 {
	row := int64(0)
	for _, f := range r.Fields {
		switch f.Kind {
		case Utf8:
			row += 4
		case Bool:
		default:
			row += int64(f.Bits / 8)
		}
	}
	if row == 0 {
		return 8 * r.end
	}
	return r.end / row
}

// Close closes the file of Open.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	return r.f.Close()
}

// damaged is the error for what the file holds at byte pos.
func (r *Reader) damaged(pos int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s", r.name, pos, fmt.Sprintf(format, args...))
}

// start tells a file from a stream, finds where the messages end and reads
// the schema.
func (r *Reader) start() error {
	if r.end == 0 {
		return fmt.Errorf("%s: an empty file, not an Arrow IPC file or stream", r.name)
	}
	head := make([]byte, 8)
	n, err := r.src.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.file = bytes.HasPrefix(head[:n], magic)
	if r.file {
		// The trailer: the footer's length and the magic again. The
		// footer's index of the batches is not needed: the messages
		// before it are read in order.
		tail := make([]byte, 10)
		if r.end < int64(len(head)+len(tail)) {
			return r.damaged(r.end, "an Arrow file too short for its footer (truncated?)")
		}
		if _, err := r.src.ReadAt(tail, r.end-10); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		if !bytes.Equal(tail[4:], magic) {
			return r.damaged(r.end-6, "an Arrow file without its closing magic (truncated?)")
		}
		footer := int64(int32(binary.LittleEndian.Uint32(tail)))
		if footer < 0 || footer > r.end-10-8 {
			return r.damaged(r.end-10, "a footer of %d bytes in a file of %d", footer, r.end)
		}
		r.end -= 10 + footer
		r.pos = 8
	}
	r.r = bufio.NewReaderSize(io.NewSectionReader(r.src, r.pos, r.end-r.pos), 64<<10)
	typ, header, bodyLen, at, err := r.message()
	if err != nil {
		return err
	}
	if typ != msgSchema {
		return r.damaged(at, "the first message is not a schema")
	}
	if bodyLen != 0 {
		return r.damaged(at, "a schema with a body of %d bytes", bodyLen)
	}
	return r.parse(at, func() { r.Fields = schema(header) })
}

// read fills b from the file.
func (r *Reader) read(b []byte) error {
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
func (r *Reader) message() (typ uint8, header fbTable, bodyLen, at int64, err error) {
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
	if size == continuation {
		if err := r.read(word[:]); err != nil {
			return 0, fbTable{}, 0, at, err
		}
		size = binary.LittleEndian.Uint32(word[:])
	}
	if size == 0 {
		if r.pos != r.end { // the end of the stream, before the messages' end
			return 0, fbTable{}, 0, at, r.damaged(at, "the end-of-stream marker, with %d bytes after it (streams joined? read each file on its own)", r.end-r.pos)
		}
		return 0, fbTable{}, 0, at, nil
	}
	if int64(size) > r.end-r.pos || size > maxMeta {
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
		if v := m.int16(0); v != v4 && v != v5 {
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
func (r *Reader) parse(at int64, fn func()) (err error) {
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

// schema reads the fields of a Schema message.
func schema(s fbTable) []Field {
	if s.int16(0) != 0 {
		panic(fbDamaged{"big-endian data (hitflow reads little-endian)"})
	}
	start, n := s.vector(1, 4)
	fields := make([]Field, n)
	for i := range n {
		f := s.vectorTable(start, i)
		name := f.string(0)
		if _, ok := f.field(4); ok {
			panic(fbDamaged{fmt.Sprintf("column %q is dictionary-encoded (hitflow reads plain columns)", name)})
		}
		if _, k := f.vector(5, 4); k != 0 {
			panic(fbDamaged{fmt.Sprintf("column %q is nested (hitflow reads flat columns)", name)})
		}
		fields[i] = Field{Name: name, Nullable: f.bool(1)}
		fields[i].Kind, fields[i].Bits = columnType(name, f.uint8(2), f.table(3))
	}
	return fields
}

// columnType is the kind and width of a column's Type union (t is absent,
// the zero fbTable, when the file leaves it out: its fields read as 0).
func columnType(name string, typ uint8, t fbTable) (Kind, int) {
	switch typ {
	case typeInt:
		w := int(t.int32(0))
		if w == 8 || w == 16 || w == 32 || w == 64 {
			if t.bool(1) {
				return Int, w
			}
			return Uint, w
		}
	case typeFloat:
		switch t.int16(0) {
		case 1:
			return Float, 32
		case 2:
			return Float, 64
		}
	case typeUtf8:
		return Utf8, 0
	case typeBool:
		return Bool, 1
	}
	what := fmt.Sprintf("type %d", typ)
	if int(typ) < len(typeNames) && typeNames[typ] != "" {
		what = typeNames[typ]
	}
	panic(fbDamaged{fmt.Sprintf("column %q is of a type hitflow does not read: %s", name, what)})
}

// typeNames name the types of Schema.fbs's Type union, for messages.
var typeNames = [...]string{1: "Null", 2: "Int", 3: "FloatingPoint", 4: "Binary", 5: "Utf8", 6: "Bool", 7: "Decimal",
	8: "Date", 9: "Time", 10: "Timestamp", 11: "Interval", 12: "List", 13: "Struct", 14: "Union", 15: "FixedSizeBinary",
	16: "FixedSizeList", 17: "Map", 18: "Duration", 19: "LargeBinary", 20: "LargeUtf8", 21: "LargeList",
	22: "RunEndEncoded", 23: "BinaryView", 24: "Utf8View", 25: "ListView", 26: "LargeListView"}

// Next reads the next record batch; nil at the end. The batch's columns
// lie over buffers that the next call reuses, unless fresh.
func (r *Reader) Next(fresh bool) (*Batch, error) {
	typ, header, bodyLen, at, err := r.message()
	if err != nil || typ == 0 {
		return nil, err
	}
	switch typ {
	case msgRecordBatch:
	case msgSchema:
		return nil, r.damaged(at, "a second schema")
	case msgDictionaryBatch:
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
	var b *Batch
	err = r.parse(at, func() { b = r.batch(header, body) })
	return b, err
}

// batch reads the columns of a RecordBatch header over body, every
// buffer checked against the body and the batch's rows.
func (r *Reader) batch(h fbTable, body []byte) *Batch {
	rows := h.int64(0)
	nodes, nn := h.vector(1, 16)
	bufs, nb := h.vector(2, 16)
	if _, ok := h.field(3); ok {
		panic(fbDamaged{"compressed buffers (hitflow writes and reads them plain)"})
	}
	if rows < 0 || nn != len(r.Fields) {
		panic(fbDamaged{fmt.Sprintf("a batch of %d rows and %d columns, the schema's %d", rows, nn, len(r.Fields))})
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
	b := &Batch{Rows: int(rows), Columns: make([]Column, len(r.Fields))}
	for i, f := range r.Fields {
		length, nulls := h.int64At(nodes+16*i), h.int64At(nodes+16*i+8)
		if length != rows || nulls < 0 || nulls > rows {
			panic(fbDamaged{fmt.Sprintf("column %q of %d rows and %d nulls in a batch of %d", f.Name, length, nulls, rows)})
		}
		// need checks that p holds the rows at perRow bytes each, or a
		// bit each when perRow is 0.
		need := func(p []byte, perRow int64, what string) {
			n := int64(len(p))
			if perRow == 0 && rows/8+min(rows%8, 1) > n || perRow > 0 && rows > n/perRow {
				panic(fbDamaged{fmt.Sprintf("column %q: %s of %d bytes for %d rows", f.Name, what, n, rows)})
			}
		}
		c := &b.Columns[i]
		c.Nulls = int(nulls)
		validity := buffer()
		if nulls > 0 {
			need(validity, 0, "a validity bitmap")
			c.Validity = validity
		}
		c.Values = buffer()
		switch f.Kind {
		case Bool:
			need(c.Values, 0, "values")
		case Utf8:
			c.Data = buffer()
			if rows > 0 {
				// rows+1 offsets, from 0 or more, never falling, within
				// the data.
				need(c.Values[min(4, len(c.Values)):], 4, "offsets")
				prev := int32(0)
				for k := range rows + 1 {
					o := int32(binary.LittleEndian.Uint32(c.Values[4*k:]))
					if o < prev || int64(o) > int64(len(c.Data)) {
						panic(fbDamaged{fmt.Sprintf("column %q: string offset %d of row %d below the one before or beyond the data's %d bytes", f.Name, o, k, len(c.Data))})
					}
					prev = o
				}
			}
		default:
			need(c.Values, int64(f.Bits/8), "values")
		}
	}
	return b
}
