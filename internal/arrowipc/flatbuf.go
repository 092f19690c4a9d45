package arrowipc

import (
	"encoding/binary"
	"fmt"
)

// fbDamaged is the panic of a flatbuffer read out of its bytes, recovered
// by Reader.parse.
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

// fbZeros are the bytes of an absent scalar, read only.
var fbZeros [8]byte

// The scalars of a slot; 0 (the schemas' defaults) when absent.
func (t fbTable) scalar(slot, n int) []byte {
	p, ok := t.field(slot)
	if !ok {
		return fbZeros[:n]
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
