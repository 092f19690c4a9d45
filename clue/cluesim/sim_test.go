package cluesim_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluesim"
)

// hashPoints is the SHA-256 of the points' columns.
func hashPoints(p *clue.Points) string {
	h := sha256.New()
	var b []byte
	for i := range p.Len() {
		b = b[:0]
		for _, c := range p.Coords {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c[i]))
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(p.Layer[i]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Weight[i]))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestGeneratePinned pins the calorimeter of a seed (the hash of the
// generator as first written), made new and made again over the storage
// of a larger one.
func TestGeneratePinned(t *testing.T) {
	const want = "08307fedd9b615440b3b2416416700cc76a6ffffa32948e803cd68c95eae8d08"
	o := cluesim.Options{Layers: 10, PointsPerLayer: 3000, Seed: 5}
	p, err := cluesim.Generate(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 30000 || len(p.Coords) != 2 {
		t.Fatalf("%d points of %d coordinates, want 30000 of 2", p.Len(), len(p.Coords))
	}
	if got := hashPoints(p); got != want {
		t.Errorf("new: hash %s, want %s", got, want)
	}
	big, err := cluesim.Generate(cluesim.Options{Layers: 20, PointsPerLayer: 3000, Seed: 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cluesim.Generate(o, big)
	if err != nil {
		t.Fatal(err)
	}
	if got := hashPoints(again); again.Len() != 30000 || got != want {
		t.Errorf("over reused storage: %d points, hash %s, want %s", again.Len(), got, want)
	}
}
