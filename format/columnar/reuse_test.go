package columnar

import (
	"path/filepath"
	"testing"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel"
)

// TestTablesReuseBuffers writes several row groups, each batch with other
// values, so that every column buffer is reused, and reads back exactly
// what was written: nothing of an earlier batch shows through.
func TestTablesReuseBuffers(t *testing.T) {
	for _, calibrated := range []bool{false, true} {
		one := fixture.Concat(fixture.Clusters(t, calibrated))
		one.Members.Reset() // the tables do not take them
		one.Start = one.Start[:1]
		var batches []*pixel.Clusters
		for k := 0; k*one.Len() < 4*rowGroup; k++ {
			b := &pixel.Clusters{}
			b.Reset()
			b.Append(one)
			for i := range b.Len() {
				b.ID[i] += int64(k * one.Len())
				b.X[i] += float64(k)
				b.Size[i] += int32(k)
			}
			batches = append(batches, b)
		}
		want := fixture.Concat(batches)
		for _, ext := range []string{".parquet", ".arrow"} {
			got := roundTrip(t, filepath.Join(t.TempDir(), "clusters"+ext), batches...)
			fixture.SameClusters(t, ext, got, want, false)
		}
	}
}

func TestReusingAllocator(t *testing.T) {
	var a reusingAllocator
	b := a.Allocate(100)
	if len(b) != 100 || cap(b) != 128 {
		t.Fatalf("len %d cap %d, want 100 128", len(b), cap(b))
	}
	b[99] = 7
	b = a.Reallocate(120, b)
	if len(b) != 120 || b[99] != 7 {
		t.Fatalf("reallocated within capacity: len %d, b[99] %d", len(b), b[99])
	}
	c := a.Reallocate(300, b)
	if len(c) != 300 || cap(c) != 512 || c[99] != 7 {
		t.Fatalf("reallocated: len %d cap %d b[99] %d", len(c), cap(c), c[99])
	}
	if d := a.Allocate(65); &d[:1][0] != &b[:1][0] {
		t.Fatal("the freed 128-byte buffer was not handed out again")
	}
	a.Free(make([]byte, 100)) // not a power of two: left to the collector
	if e := a.Allocate(100); cap(e) != 128 || &e[:1][0] == &b[:1][0] {
		t.Fatal("a foreign buffer was handed out")
	}
}

// TestZeroingAllocator: with zero set, a reused buffer, and the part a
// reallocation within its capacity adds, read as zeros, as fresh memory.
func TestZeroingAllocator(t *testing.T) {
	a := reusingAllocator{zero: true}
	b := a.Allocate(200)
	dirty := func(b []byte) {
		for i := range b[:cap(b)] {
			b[:cap(b)][i] = 0xff
		}
	}
	zeros := func(what string, b []byte) {
		for i, v := range b {
			if v != 0 {
				t.Fatalf("%s: byte %d is %#x", what, i, v)
			}
		}
	}
	dirty(b)
	a.Free(b)
	c := a.Allocate(150)
	if &c[0] != &b[0] {
		t.Fatal("the freed buffer was not handed out again")
	}
	zeros("reused", c)
	dirty(c)
	clear(c[:100])
	zeros("reallocated within its capacity", a.Reallocate(250, c[:100]))
}
