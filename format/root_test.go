package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
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
	fixture.SameClusters(t, ".root", roundTrip(t, filepath.Join(t.TempDir(), "b.root"), c), c, true)
}

// TestROOTDamageIsAnError damages the compression header of the first
// basket. groot v0.40.0 panics on it in a goroutine of its own, which
// would end the program; hitflow's own reader says where the file is
// damaged.
func TestROOTDamageIsAnError(t *testing.T) {
	name := filepath.Join(t.TempDir(), "damaged.root")
	// Enough clusters for the baskets to be compressed.
	c := &pixel.Clusters{}
	c.Reset()
	for range 1000 {
		c.Append(fixture.Two(t, true))
	}
	writeClusters(t, name, c)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// Walk the records of the (small-file) layout from fBEGIN to the first
	// compressed basket: a key of 26 bytes of numbers, then the class name.
	be := binary.BigEndian
	payload, record := -1, -1
	for pos := int(be.Uint32(b[8:])); pos < int(be.Uint32(b[12:])); pos += int(be.Uint32(b[pos:])) {
		nbytes, objlen, keylen := int(be.Uint32(b[pos:])), int(be.Uint32(b[pos+6:])), int(be.Uint16(b[pos+14:]))
		if string(b[pos+27:pos+27+int(b[pos+26])]) == "TBasket" && objlen != nbytes-keylen {
			payload, record = pos+keylen, pos
			break
		}
	}
	if payload < 0 || string(b[payload:payload+2]) != "ZS" {
		t.Fatalf("no basket compressed with zstd found: the layout changed")
	}
	copy(b[payload:], "@4")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadClusters(name)
	if want := fmt.Sprintf("%s: byte %d: a damaged @4 block: compression \"@4\", which hitflow does not write", name, record); err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	// The file's keys are intact: its kind still reads.
	if kind, err := Kind(name); err != nil || kind != "clusters" {
		t.Fatalf("Kind = %q, %v; want clusters", kind, err)
	}
	if _, err := ReadClusters(filepath.Join(t.TempDir(), "missing.root")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
}
