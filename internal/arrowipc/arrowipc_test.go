package arrowipc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The seeds were written by arrow-go v18.8.0's IPC writers (a file and a
// stream), two batches of the columns of wantFields: the rows of
// TestSeeds. format/columnar's TestIPCReadsArrowGo compares this reader
// with arrow-go's on random batches of every type.
var seeds = []string{"testdata/batches.arrow", "testdata/stream.arrows"}

var wantFields = []Field{
	{"i8", true, Int, 8}, {"u16", false, Uint, 16}, {"i64", false, Int, 64}, {"f32", false, Float, 32},
	{"f64", true, Float, 64}, {"ok", false, Bool, 1}, {"s", true, Utf8, 0},
}

// row is a batch's row i as Go values, nil for a null.
func row(b *Batch, fields []Field, i int) []any {
	var out []any
	for k, c := range b.Columns {
		if c.Validity != nil && c.Validity[i/8]>>(i%8)&1 == 0 {
			out = append(out, nil)
			continue
		}
		v := c.Values
		switch f := fields[k]; {
		case f.Kind == Int && f.Bits == 8:
			out = append(out, int8(v[i]))
		case f.Kind == Uint && f.Bits == 16:
			out = append(out, binary.LittleEndian.Uint16(v[2*i:]))
		case f.Kind == Int && f.Bits == 64:
			out = append(out, int64(binary.LittleEndian.Uint64(v[8*i:])))
		case f.Kind == Float && f.Bits == 32:
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(v[4*i:])))
		case f.Kind == Float && f.Bits == 64:
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(v[8*i:])))
		case f.Kind == Bool:
			out = append(out, v[i/8]>>(i%8)&1 == 1)
		case f.Kind == Utf8:
			out = append(out, string(c.Data[binary.LittleEndian.Uint32(v[4*i:]):binary.LittleEndian.Uint32(v[4*i+4:])]))
		}
	}
	return out
}

// TestSeeds reads the file and the stream to the values arrow-go wrote.
func TestSeeds(t *testing.T) {
	want := [][]any{
		{int8(1), uint16(7), int64(-1), float32(0.5), nil, true, "ab"},
		{int8(-2), uint16(65535), int64(1 << 40), float32(-1.25), 2.5, false, ""},
		{nil, uint16(0), int64(3), float32(3), 1e300, true, "cde"},
		{int8(5), uint16(9), int64(9), float32(9), 9.0, false, nil},
	}
	for _, name := range seeds {
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Fields, wantFields) {
			t.Fatalf("%s: fields %v", name, r.Fields)
		}
		var got [][]any
		for _, fresh := range []bool{false, true, false} {
			b, err := r.Next(fresh)
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				break
			}
			for i := range b.Rows {
				got = append(got, row(b, r.Fields, i))
			}
		}
		r.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: rows %v, want %v", name, got, want)
		}
		// A row takes 1+2+8+4+8 bytes and a string's offset, 27.
		if m := r.MaxRows(); m < int64(len(want)) || m > r.Size()/27 {
			t.Fatalf("%s: at most %d rows in %d bytes", name, m, r.Size())
		}
	}
}

// TestDamaged: damaged and foreign files are errors naming the file and
// the byte, before anything large is allocated.
func TestDamaged(t *testing.T) {
	file, err := os.ReadFile(seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	stream, err := os.ReadFile(seeds[1])
	if err != nil {
		t.Fatal(err)
	}
	// The first record batch: after the schema's message, in the stream.
	schemaLen := 8 + int(binary.LittleEndian.Uint32(stream[4:]))
	meta := int(binary.LittleEndian.Uint32(stream[schemaLen+4:]))
	body := schemaLen + 8 + meta
	// mutate returns a copy of b with the 4 bytes at i set to v.
	mutate := func(b []byte, i int, v uint32) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint32(b[i:], v)
		return b
	}
	// The string offsets 0, 2, 2, 5 of the first batch, in its body.
	offsets := body + bytes.Index(stream[body:], []byte{0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0})
	if offsets < body {
		t.Fatal("no string offsets in the first body")
	}
	for _, tc := range []struct {
		what string
		data []byte
		want string
	}{
		{"empty", nil, "an empty file"},
		{"text", []byte("x,y\n1,2\n"), "byte 0: metadata of 175713400 bytes, beyond the messages' end at byte 8"},
		{"file cut short", file[:len(file)/2], "without its closing magic"},
		{"stream cut in a body", stream[:body+8], "byte " + strconv.Itoa(schemaLen) + ": a body of"},
		{"stream cut in a message's length", stream[:schemaLen+2], "the file ends inside a message"},
		{"stream without its end", stream[:len(stream)-8], "the stream ends without its end marker"},
		{"streams joined", append(bytes.Clone(stream), stream...), "byte " + strconv.Itoa(len(stream)-8) + ": the end-of-stream marker, with " + strconv.Itoa(len(stream)) + " bytes after it"},
		{"footer too long", mutate(file, len(file)-10, 1<<30), "a footer of 1073741824 bytes"},
		{"metadata too long", mutate(stream, 4, 1<<31-1), "byte 0: metadata of 2147483647 bytes"},
		{"root offset out of the metadata", mutate(stream, schemaLen+8, 1<<30), "damaged message: offset 1073741824 out of the metadata"},
		{"falling string offsets", mutate(stream, offsets+8, 1), "string offset 1 of row 2 below the one before"},
		{"string offsets beyond the data", mutate(stream, offsets+12, 1000), "string offset 1000 of row 3"},
	} {
		name := "run/d.arrow"
		err := readAll(t, name, tc.data)
		if err == nil || !strings.HasPrefix(err.Error(), name+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.what, err, tc.want)
		}
	}
}

// readAll reads every batch of data, named name, each checked against the
// promises of Column.
func readAll(t *testing.T, name string, data []byte) error {
	r, err := NewReader(name, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	for {
		b, err := r.Next(false)
		if err != nil || b == nil {
			return err
		}
		if err := check(r.Fields, b); err != nil {
			t.Fatal(err)
		}
	}
}

// check tells how a batch breaks the promises of Column, independently of
// the reader's checks.
func check(fields []Field, b *Batch) error {
	rows := b.Rows
	bitmap := (rows + 7) / 8
	if len(b.Columns) != len(fields) {
		return fmt.Errorf("%d columns for %d fields", len(b.Columns), len(fields))
	}
	for i, c := range b.Columns {
		f := fields[i]
		if c.Nulls < 0 || c.Nulls > rows || c.Nulls > 0 && len(c.Validity) < bitmap {
			return fmt.Errorf("%s: %d nulls, a bitmap of %d bytes for %d rows", f.Name, c.Nulls, len(c.Validity), rows)
		}
		switch f.Kind {
		case Bool:
			if len(c.Values) < bitmap {
				return fmt.Errorf("%s: %d bytes of booleans for %d rows", f.Name, len(c.Values), rows)
			}
		case Utf8:
			if rows == 0 {
				continue
			}
			if len(c.Values) < 4*(rows+1) {
				return fmt.Errorf("%s: %d bytes of offsets for %d rows", f.Name, len(c.Values), rows)
			}
			for k := range rows {
				from, to := int32(binary.LittleEndian.Uint32(c.Values[4*k:])), int32(binary.LittleEndian.Uint32(c.Values[4*k+4:]))
				if from < 0 || to < from || int(to) > len(c.Data) {
					return fmt.Errorf("%s: row %d from %d to %d in %d bytes", f.Name, k, from, to, len(c.Data))
				}
			}
		default:
			if len(c.Values) < rows*f.Bits/8 {
				return fmt.Errorf("%s: %d bytes for %d rows of %d bits", f.Name, len(c.Values), rows, f.Bits)
			}
		}
	}
	return nil
}

// FuzzRead feeds damaged files and streams to the reader (from memory: a
// file a run made this VM's disk the bottleneck): an error naming the
// file, or batches whose columns hold their rows (check); never another
// panic, never an allocation beyond the file's size.
func FuzzRead(f *testing.F) {
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		name := "run/fuzz.arrow"
		if err := readAll(t, name, data); err != nil && !strings.HasPrefix(err.Error(), name+": ") {
			t.Fatalf("error without the file name: %v", err)
		}
	})
}
