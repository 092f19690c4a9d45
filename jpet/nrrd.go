package jpet

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Image is a reconstructed or simulated image: NZ x NY pixels of size
// Pixel (metres), z running fastest, row 0 at +y, centred on the scanner.
type Image struct {
	Values []float64
	NZ, NY int
	Pixel  float64 // 0 when unknown
}

// WriteNRRD writes an image as float32 with an attached NRRD header
// (sizes nz ny: z runs fastest; row 0 is +y; spacings in metres when the
// pixel size is known).
func WriteNRRD(w io.Writer, img Image) error {
	if len(img.Values) != img.NZ*img.NY {
		return fmt.Errorf("jpet: image of %d pixels is not %d x %d", len(img.Values), img.NZ, img.NY)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "NRRD0004\ntype: float\ndimension: 2\nsizes: %d %d\n", img.NZ, img.NY)
	if img.Pixel > 0 {
		fmt.Fprintf(bw, "spacings: %g %g\n", img.Pixel, img.Pixel)
	}
	fmt.Fprintf(bw, "endian: little\nencoding: raw\n\n")
	var b [4]byte
	for _, v := range img.Values {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(float32(v)))
		bw.Write(b[:])
	}
	return bw.Flush()
}

// ReadNRRD reads an image written by WriteNRRD: a 2D raw little-endian
// float NRRD with an attached header. Errors name the file and the line or
// byte offset.
func ReadNRRD(r io.Reader, name string) (Image, error) {
	var img Image
	br := bufio.NewReader(r)
	line := 0
	fields := map[string]string{}
	var off int64
	for {
		s, err := br.ReadString('\n')
		line++
		off += int64(len(s))
		if err != nil {
			return img, fmt.Errorf("jpet: %s: line %d: header ends without a blank line", name, line)
		}
		s = strings.TrimRight(s, "\r\n")
		if line == 1 {
			if !strings.HasPrefix(s, "NRRD000") {
				return img, fmt.Errorf("jpet: %s: line 1: %q is not an NRRD magic", name, s)
			}
			continue
		}
		if s == "" {
			break
		}
		if strings.HasPrefix(s, "#") {
			continue
		}
		k, v, ok := strings.Cut(s, ":")
		if !ok {
			return img, fmt.Errorf("jpet: %s: line %d: %q is not a field", name, line, s)
		}
		fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	for k, want := range map[string]string{"type": "float", "dimension": "2", "endian": "little", "encoding": "raw"} {
		if fields[k] != want {
			return img, fmt.Errorf("jpet: %s: %s %q, want %q", name, k, fields[k], want)
		}
	}
	sizes := strings.Fields(fields["sizes"])
	var err1, err2 error
	if len(sizes) == 2 {
		img.NZ, err1 = strconv.Atoi(sizes[0])
		img.NY, err2 = strconv.Atoi(sizes[1])
	}
	if len(sizes) != 2 || err1 != nil || err2 != nil || img.NZ < 1 || img.NY < 1 || img.NZ*img.NY > 1<<28 {
		return img, fmt.Errorf("jpet: %s: sizes %q are not two positive integers", name, fields["sizes"])
	}
	if sp := strings.Fields(fields["spacings"]); len(sp) == 2 {
		if p, err := strconv.ParseFloat(sp[0], 64); err == nil && p > 0 {
			img.Pixel = p
		}
	}
	// Read in blocks, so that a header promising more than the file holds
	// does not allocate it.
	n := img.NZ * img.NY
	buf := make([]byte, 4*min(n, 1<<16))
	img.Values = make([]float64, 0, min(n, 1<<16))
	for len(img.Values) < n {
		b := buf[:4*min(n-len(img.Values), len(buf)/4)]
		if k, err := io.ReadFull(br, b); err != nil {
			got := 4*len(img.Values) + k
			return img, fmt.Errorf("jpet: %s: byte %d: %d of %d data bytes", name, off+int64(got), got, 4*n)
		}
		for i := 0; i < len(b); i += 4 {
			img.Values = append(img.Values, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))))
		}
	}
	return img, nil
}
