package jpet

// Image is a reconstructed or simulated image: NZ x NY pixels of size
// Pixel (metres), z running fastest, row 0 at +y, centred on the scanner.
type Image struct {
	Values []float64
	NZ, NY int
	Pixel  float64 // 0 when unknown
}
