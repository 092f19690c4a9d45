package pixelbench

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// TestMeasureCountsEveryMode checks that every mode clusters the repeated
// set into the same number of clusters, repeat times the clusters of one
// pass, and leaves the set unshifted.
func TestMeasureCountsEveryMode(t *testing.T) {
	d, _ := pixelsim.DatasetByName("pion45")
	s, err := Load(d, 100000, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Hits != 100000 || len(s.Batches) != 2 {
		t.Fatalf("%d hits in %d batches", s.Hits, len(s.Batches))
	}
	first := s.Batches[0].ToA[0]
	one, err := Measure(context.Background(), s, pixel.DefaultConfig(), pixel.Sequential, nil, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pixel.Mode{pixel.Sequential, pixel.LanesMode, pixel.Chunked} {
		r, err := Measure(context.Background(), s, pixel.DefaultConfig(), mode, nil, 2, 3, 2)
		if err != nil {
			t.Fatal(err)
		}
		if r.Clusters != 3*one.Clusters || r.Hits != 300000 || len(r.Runs) != 2 || r.MhitPerS() <= 0 {
			t.Fatalf("%v: %+v, one pass %d clusters", mode, r, one.Clusters)
		}
	}
	if s.Batches[0].ToA[0] != first {
		t.Fatal("set left shifted")
	}
}

// stopAfter is a context canceled once Err has been asked n times.
type stopAfter struct {
	context.Context
	n int
}

func (c *stopAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestMeasureStopsUnshifted: canceled in the middle of a run, Measure
// returns the error and leaves the set as it found it.
func TestMeasureStopsUnshifted(t *testing.T) {
	d, _ := pixelsim.DatasetByName("gamma")
	s, err := Load(d, 100000, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	var before []pixel.Time
	for _, b := range s.Batches {
		before = append(before, b.ToA...)
	}
	_, err = Measure(&stopAfter{context.Background(), 3}, s, pixel.DefaultConfig(), pixel.Sequential, nil, 1, 5, 1)
	if err != context.Canceled {
		t.Fatalf("error %v", err)
	}
	var after []pixel.Time
	for _, b := range s.Batches {
		after = append(after, b.ToA...)
	}
	if !slices.Equal(before, after) {
		t.Fatal("set left shifted")
	}
}

// TestWatchMemory: memory taken during the watch counts in its peak,
// whether it is still held at the end (the last sample) or was given back
// before (the samples on the way), and little else does.
func TestWatchMemory(t *testing.T) {
	const size = 64 << 20
	take := func() []byte {
		b := make([]byte, size)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		return b
	}
	// The runtime may give back other memory meanwhile (its scavenger
	// runs in the background): a peak of half the size is one.
	check := func(how string, peak uint64) {
		if peak < size/2 || peak > size+16<<20 {
			t.Fatalf("%s: peak %d MB above the start, want %d MB", how, peak>>20, size>>20)
		}
	}
	m := WatchMemory(time.Hour)
	b := take()
	check("held at the end", m.Stop())
	runtime.KeepAlive(b)

	b = nil
	m = WatchMemory(time.Millisecond)
	b = take()
	time.Sleep(200 * time.Millisecond) // 200 ticks: a sample falls in them on a busy machine too
	runtime.KeepAlive(b)
	b = nil
	debug.FreeOSMemory()
	check("given back before the end", m.Stop())
}

func TestSettleDisk(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "clusters.arrow")
	if err := os.WriteFile(name, []byte("previous run"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SettleDisk(name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the previous output is still there: %v", err)
	}
	if err := SettleDisk(name); err != nil { // nothing to remove: the first run
		t.Fatal(err)
	}
	// What cannot be removed is an error, not a run on top of it.
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SettleDisk(dir); err == nil {
		t.Fatal("a directory with files in it was taken for removed")
	}
}
