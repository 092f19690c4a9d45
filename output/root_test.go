package output

import (
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// TestROOTBigThenSmall writes a large cluster followed by many small ones.
// groot v0.40.0's leaf-list array branches (x[n]) crash on that: an entry
// of more than 1000 bytes raises the basket's entry capacity without
// growing its offset table, and the 1001st entry indexes past it. The
// hits are therefore std::vector branches, whose writer grows the table.
func TestROOTBigThenSmall(t *testing.T) {
	c := &pixel.Clusters{}
	c.Reset()
	add := func(n int) {
		one := &pixel.Clusters{}
		one.Reset()
		one.ID, one.Size, one.FirstToA, one.LastToA = []int64{int64(c.Len())}, []int32{int32(n)}, []pixel.Time{0}, []pixel.Time{0}
		one.ToTSum, one.ESum, one.X, one.Y = []int64{1}, []float64{0}, []float64{1}, []float64{1}
		one.XMin, one.XMax, one.YMin, one.YMax, one.Max = []uint16{1}, []uint16{1}, []uint16{1}, []uint16{1}, []float64{1}
		for i := range n {
			one.Members.Append(uint16(i%256), 0, pixel.Time(i), 1)
		}
		one.Start = append(one.Start, one.Members.Len())
		c.Append(one)
	}
	add(200)
	for range 3000 {
		add(1)
	}
	sameClusters(t, ".root", roundTrip(t, filepath.Join(t.TempDir(), "b.root"), c), c, true)
}
