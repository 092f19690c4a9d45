// Package nrrd reads and writes NRRD files (teem's "nearly raw raster
// data"): a text header and raw little-endian samples, the first axis
// fastest. hitflow writes J-PET images as 2D float and super-resolved
// cluster images as 2D or 3D (x, y, time of flight) uint32 counts; 3D
// Slicer, ITK, Fiji (with its NRRD plugin) and pynrrd read both.
package nrrd

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/jpet"
)

// Header is the part of an NRRD header hitflow writes and reads. Every
// slice but Sizes is optional (nil) or has one entry per axis.
type Header struct {
	Type          string // float or uint32, as read (the writers set their own)
	Sizes         []int
	Spacings      []float64 // the step of each axis, in its unit
	Mins          []float64 // the axis' start: the lower edge of its first sample
	Labels, Units []string
	Comment       string // a comment line after the magic
}

// maxValues bounds what a header may ask to be read.
const maxValues = 1 << 28

// WriteFloat writes v as 32-bit floats.
func WriteFloat(w io.Writer, h Header, v []float64) error {
	return write(w, h, "float", len(v), func(b []byte, i int) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v[i]))) })
}

// WriteUint32 writes v as unsigned 32-bit integers.
func WriteUint32(w io.Writer, h Header, v []uint32) error {
	return write(w, h, "uint32", len(v), func(b []byte, i int) { binary.LittleEndian.PutUint32(b, v[i]) })
}

func write(w io.Writer, h Header, typ string, n int, put func([]byte, int)) error {
	count := 1
	for _, s := range h.Sizes {
		count *= s
	}
	if len(h.Sizes) == 0 || count != n {
		return fmt.Errorf("nrrd: %d values for sizes %v", n, h.Sizes)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "NRRD0004\n")
	for line := range strings.Lines(h.Comment) {
		fmt.Fprintf(bw, "# %s\n", strings.TrimSuffix(line, "\n"))
	}
	fmt.Fprintf(bw, "type: %s\ndimension: %d\nsizes:%s\n", typ, len(h.Sizes), join(h.Sizes, func(s int) string { return strconv.Itoa(s) }))
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	q := strconv.Quote
	if h.Spacings != nil {
		fmt.Fprintf(bw, "spacings:%s\n", join(h.Spacings, g))
	}
	if h.Mins != nil {
		fmt.Fprintf(bw, "axis mins:%s\n", join(h.Mins, g))
	}
	if h.Labels != nil {
		fmt.Fprintf(bw, "labels:%s\n", join(h.Labels, q))
	}
	if h.Units != nil {
		fmt.Fprintf(bw, "units:%s\n", join(h.Units, q))
	}
	fmt.Fprintf(bw, "endian: little\nencoding: raw\n\n")
	var b [4]byte
	for i := range n {
		put(b[:], i)
		bw.Write(b[:])
	}
	return bw.Flush()
}

// join writes each value after a space.
func join[T any](vs []T, f func(T) string) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteByte(' ')
		b.WriteString(f(v))
	}
	return b.String()
}

// Read reads a file with an attached header and raw little-endian float
// or uint32 samples, of up to 2^28 values. Errors name the file and the
// line or byte offset.
func Read(r io.Reader, name string) (Header, []float64, error) {
	var h Header
	br := bufio.NewReader(r)
	fail := func(format string, args ...any) (Header, []float64, error) {
		return h, nil, fmt.Errorf("nrrd: %s: %s", name, fmt.Sprintf(format, args...))
	}
	line := 0
	fields := map[string]string{}
	var off int64
	for {
		s, err := br.ReadString('\n')
		line++
		off += int64(len(s))
		if err != nil {
			return fail("line %d: header ends without a blank line", line)
		}
		s = strings.TrimRight(s, "\r\n")
		if line == 1 {
			if !strings.HasPrefix(s, "NRRD000") {
				return fail("line 1: %q is not an NRRD magic", excerpt(s))
			}
			continue
		}
		if s == "" {
			break
		}
		if c, ok := strings.CutPrefix(s, "#"); ok {
			if h.Comment != "" {
				h.Comment += "\n"
			}
			h.Comment += strings.TrimPrefix(c, " ")
			continue
		}
		k, v, ok := strings.Cut(s, ":")
		if !ok {
			return fail("line %d: %q is not a field", line, excerpt(s))
		}
		fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	typ := fields["type"]
	if typ != "float" && typ != "uint32" {
		return fail("type %q, want float or uint32", excerpt(typ))
	}
	h.Type = typ
	for k, want := range map[string]string{"endian": "little", "encoding": "raw"} {
		if fields[k] != want {
			return fail("%s %q, want %q", k, excerpt(fields[k]), want)
		}
	}
	dim, err := strconv.Atoi(fields["dimension"])
	sizes := strings.Fields(fields["sizes"])
	if err != nil || dim < 1 || dim > 16 || len(sizes) != dim {
		return fail("dimension %q with sizes %q", excerpt(fields["dimension"]), excerpt(fields["sizes"]))
	}
	n := 1
	for _, s := range sizes {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > maxValues || n*v > maxValues {
			return fail("sizes %q are not positive integers of at most 2^28 values", excerpt(fields["sizes"]))
		}
		h.Sizes = append(h.Sizes, v)
		n *= v
	}
	for key, dst := range map[string]*[]float64{"spacings": &h.Spacings, "axis mins": &h.Mins} {
		if f := strings.Fields(fields[key]); len(f) == dim {
			for _, s := range f {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					v = math.NaN() // NRRD writes nan for an axis without one
				}
				*dst = append(*dst, v)
			}
		}
	}
	for key, dst := range map[string]*[]string{"labels": &h.Labels, "units": &h.Units} {
		if s, ok := quoted(fields[key]); ok && len(s) == dim {
			*dst = s
		}
	}
	// Read in blocks, so that a header promising more than the file holds
	// does not allocate it.
	buf := make([]byte, 4*min(n, 1<<16))
	values := make([]float64, 0, min(n, 1<<16))
	for len(values) < n {
		b := buf[:4*min(n-len(values), len(buf)/4)]
		if k, err := io.ReadFull(br, b); err != nil {
			got := 4*len(values) + k
			return fail("byte %d: %d of %d data bytes", off+int64(got), got, 4*n)
		}
		for i := 0; i < len(b); i += 4 {
			u := binary.LittleEndian.Uint32(b[i:])
			if typ == "float" {
				values = append(values, float64(math.Float32frombits(u)))
			} else {
				values = append(values, float64(u))
			}
		}
	}
	return h, values, nil
}

// quoted splits a field of quoted strings.
func quoted(s string) ([]string, bool) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		p, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, false
		}
		v, _ := strconv.Unquote(p)
		out = append(out, v)
		s = s[len(p):]
	}
	return out, true
}

// excerpt shortens what an error quotes of a damaged header.
func excerpt(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// WriteImage writes a J-PET image as float (sizes nz ny: z runs fastest;
// row 0 is +y; spacings in metres when the pixel size is known).
func WriteImage(w io.Writer, img jpet.Image) error {
	if len(img.Values) != img.NZ*img.NY {
		return fmt.Errorf("nrrd: image of %d pixels is not %d x %d", len(img.Values), img.NZ, img.NY)
	}
	h := Header{Sizes: []int{img.NZ, img.NY}}
	if img.Pixel > 0 {
		h.Spacings = []float64{img.Pixel, img.Pixel}
	}
	return WriteFloat(w, h, img.Values)
}

// ReadImage reads a J-PET image written by WriteImage: a 2D float NRRD.
func ReadImage(r io.Reader, name string) (jpet.Image, error) {
	h, v, err := Read(r, name)
	if err != nil {
		return jpet.Image{}, err
	}
	if len(h.Sizes) != 2 || h.Type != "float" {
		return jpet.Image{}, fmt.Errorf("nrrd: %s: %d dimensions of %s, want a 2D float image (of J-PET; hitflow image draws its counts itself, with -o NAME.png)", name, len(h.Sizes), h.Type)
	}
	img := jpet.Image{Values: v, NZ: h.Sizes[0], NY: h.Sizes[1]}
	if len(h.Spacings) == 2 && h.Spacings[0] > 0 {
		img.Pixel = h.Spacings[0]
	}
	return img, nil
}
