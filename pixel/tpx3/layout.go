package tpx3

import "fmt"

// Layout places the chips of a readout on one sensor plane. Chip c's pixel
// (x, y) lands at (OriginX[c] + x^FlipX[c], OriginY[c] + y^FlipY[c]); a flip
// of 0xFF mirrors the 256-pixel axis. Hits from chips beyond the layout are
// counted and not decoded further.
type Layout struct {
	Name             string
	Width, Height    int
	OriginX, OriginY []uint16
	FlipX, FlipY     []uint8
}

// Layouts understood by [LayoutByName].
//
//   - single: one chip, 256 x 256; every other chip is out of the layout.
//   - row: up to four chips side by side with one empty column between
//     them, so that no cluster joins two chips (1027 x 256). Chip 0 keeps its
//     own coordinates.
//   - quad: the 2 x 2 TPX3Cam quad as ORNL's sophiread places it (516 x 516,
//     a gap of four pixels): chip 0 at x+260; chip 1 rotated by 180 degrees at
//     (260, 260); chip 2 rotated at (0, 260); chip 3 unchanged.
func LayoutByName(name string) (Layout, error) {
	switch name {
	case "single":
		return Layout{Name: name, Width: 256, Height: 256, OriginX: []uint16{0}, OriginY: []uint16{0}, FlipX: []uint8{0}, FlipY: []uint8{0}}, nil
	case "row":
		return Layout{Name: name, Width: 4*257 - 1, Height: 256,
			OriginX: []uint16{0, 257, 514, 771}, OriginY: []uint16{0, 0, 0, 0},
			FlipX: []uint8{0, 0, 0, 0}, FlipY: []uint8{0, 0, 0, 0}}, nil
	case "quad":
		return Layout{Name: name, Width: 516, Height: 516,
			OriginX: []uint16{260, 260, 0, 0}, OriginY: []uint16{0, 260, 260, 0},
			FlipX: []uint8{0, 0xFF, 0xFF, 0}, FlipY: []uint8{0, 0xFF, 0xFF, 0}}, nil
	}
	return Layout{}, fmt.Errorf("tpx3: unknown chip layout %q (want single, row or quad)", name)
}
