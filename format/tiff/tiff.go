// Package tiff writes count images as 16-bit grayscale TIFF files
// (deflate-compressed, through golang.org/x/image/tiff), which ImageJ,
// Fiji and every imaging tool read. Row y of the file is y of the
// sensor: row 0, at the top as viewers show it, is y = 0.
package tiff

import (
	"fmt"
	"image"
	"io"
	"math"

	xtiff "golang.org/x/image/tiff"
)

// WriteCounts writes width x height counts (bin (x, y) at y*width + x).
// A count above 65535 is an error naming its bin: a 16-bit image cannot
// hold it.
func WriteCounts(w io.Writer, width, height int, counts []uint32) error {
	if width < 1 || height < 1 || len(counts) != width*height {
		return fmt.Errorf("tiff: %d counts for %d x %d", len(counts), width, height)
	}
	img := image.NewGray16(image.Rect(0, 0, width, height))
	for k, n := range counts {
		if n > math.MaxUint16 {
			return fmt.Errorf("tiff: bin (%d, %d) holds %d, more than a 16-bit image holds (65535)", k%width, k/width, n)
		}
		img.Pix[2*k], img.Pix[2*k+1] = uint8(n>>8), uint8(n)
	}
	return xtiff.Encode(w, img, &xtiff.Options{Compression: xtiff.Deflate})
}
