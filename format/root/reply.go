package root

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"unsafe"
)

// The ROOT child's answer travels raw: every slice of numbers
// is its length and then its memory as it is, so a reply of ten million
// values costs a copy rather than an encoding per value (gob took a quarter
// of a read's time). Both ends are the same executable on the same
// machine, so the layout and byte order agree. Structs are their exported
// fields in order, pointers a presence word, other values eight bytes.

// writeRaw writes the value v points to.
func writeRaw(w io.Writer, v any) error {
	return writeValue(w, reflect.ValueOf(v).Elem())
}

// readRaw reads into the value v points to what writeRaw wrote.
func readRaw(r io.Reader, v any) error {
	return readValue(r, reflect.ValueOf(v).Elem())
}

func writeValue(w io.Writer, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Struct:
		return eachExported(v, func(f reflect.Value) error { return writeValue(w, f) })
	case reflect.Pointer:
		if v.IsNil() {
			return writeWord(w, 0)
		}
		if err := writeWord(w, 1); err != nil {
			return err
		}
		return writeValue(w, v.Elem())
	case reflect.Slice:
		if err := writeWord(w, uint64(v.Len())); err != nil {
			return err
		}
		if flat(v.Type().Elem()) {
			_, err := w.Write(sliceBytes(v))
			return err
		}
		for i := range v.Len() {
			if err := writeValue(w, v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		if err := writeWord(w, uint64(v.Len())); err != nil {
			return err
		}
		_, err := io.WriteString(w, v.String())
		return err
	case reflect.Bool:
		return writeWord(w, uint64(b2u(v.Bool())))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return writeWord(w, uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return writeWord(w, v.Uint())
	case reflect.Float32, reflect.Float64:
		return writeWord(w, math.Float64bits(v.Float()))
	}
	return fmt.Errorf("raw reply: cannot write a %s", v.Type())
}

func readValue(r io.Reader, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Struct:
		return eachExported(v, func(f reflect.Value) error { return readValue(r, f) })
	case reflect.Pointer:
		present, err := readWord(r)
		if err != nil || present == 0 {
			return err
		}
		v.Set(reflect.New(v.Type().Elem()))
		return readValue(r, v.Elem())
	case reflect.Slice:
		n, err := readLen(r)
		if err != nil {
			return err
		}
		if n == 0 {
			v.SetZero() // nil, as gob and the readers give
			return nil
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		if flat(v.Type().Elem()) {
			_, err := io.ReadFull(r, sliceBytes(v))
			return err
		}
		for i := range n {
			if err := readValue(r, v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		n, err := readLen(r)
		if err != nil {
			return err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		v.SetString(string(b))
		return nil
	}
	word, err := readWord(r)
	if err != nil {
		return err
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(word != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(word))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(word)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(math.Float64frombits(word))
	default:
		return fmt.Errorf("raw reply: cannot read a %s", v.Type())
	}
	return nil
}

// eachExported calls fn on the exported fields of struct v in order.
func eachExported(v reflect.Value, fn func(reflect.Value) error) error {
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if err := fn(v.Field(i)); err != nil {
			return err
		}
	}
	return nil
}

// flat reports whether slices of t travel as their memory: numbers and
// bools, which hold no pointers.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// sliceBytes is the memory of a slice of raw elements.
func sliceBytes(v reflect.Value) []byte {
	if v.Len() == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), v.Len()*int(v.Type().Elem().Size()))
}

func writeWord(w io.Writer, u uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], u)
	_, err := w.Write(b[:])
	return err
}

func readWord(r io.Reader) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// readLen reads a length; one that no slice can have means the stream is
// not what writeRaw wrote.
func readLen(r io.Reader) (int, error) {
	n, err := readWord(r)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt32*16 {
		return 0, fmt.Errorf("raw reply: length %d", n)
	}
	return int(n), nil
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
