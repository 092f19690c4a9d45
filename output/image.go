package output

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
)

// WriteImagePNG draws a row-major image (nx columns) as 8-bit grey, black
// at zero and white at its maximum; each pixel is scale x scale screen
// pixels.
func WriteImagePNG(w io.Writer, img []float64, nx, ny, scale int) error {
	if nx*ny != len(img) || nx < 1 || scale < 1 {
		return fmt.Errorf("output: image of %d values is not %d x %d", len(img), nx, ny)
	}
	peak := 0.0
	for _, v := range img {
		peak = max(peak, v)
	}
	out := image.NewGray(image.Rect(0, 0, nx*scale, ny*scale))
	for y := range ny * scale {
		for x := range nx * scale {
			v := 0.0
			if peak > 0 {
				v = max(img[(y/scale)*nx+x/scale], 0) / peak
			}
			out.SetGray(x, y, color.Gray{uint8(v*255 + 0.5)})
		}
	}
	return png.Encode(w, out)
}
