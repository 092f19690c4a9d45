package jpet

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// WriteNRRD writes an image as float32 with an attached NRRD header
// (sizes nz ny: z runs fastest; row 0 is +y).
func WriteNRRD(w io.Writer, img []float64, nz, ny int) error {
	if len(img) != nz*ny {
		return fmt.Errorf("jpet: image of %d pixels is not %d x %d", len(img), nz, ny)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "NRRD0004\ntype: float\ndimension: 2\nsizes: %d %d\nendian: little\nencoding: raw\n\n", nz, ny)
	var b [4]byte
	for _, v := range img {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(float32(v)))
		bw.Write(b[:])
	}
	return bw.Flush()
}
