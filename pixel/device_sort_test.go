package pixel_test

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/internal/devicetest"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelcl"
)

// keySorter opens the test's device and the sort on it, taking batches
// of any size.
func keySorter(t *testing.T) (*opencl.Context, *pixelcl.Sorter) {
	ctx := devicetest.Open(t)
	s, err := pixelcl.NewSorter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.SetMinKeys(1)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return ctx, s
}

// TestDeviceSortKeys: the device's permutation is that of a stable sort
// of the offsets, for batches around the work-items' runs (those of a GPU
// and of a CPU device, and one that divides nothing) and the scans'
// blocks, offsets of 0 to 40 bits (passes skipped by none), and few
// distinct offsets (long runs of ties).
func TestDeviceSortKeys(t *testing.T) {
	_, s := keySorter(t)
	r := rand.New(rand.NewPCG(3, 4))
	for k, n := range []int{1, 2, 3, 31, 33, 255, 256, 257, 1000, 1025, 65535, 65537, 300000} {
		s.SetRun([]int{32, 1024, 100}[k%3])
		from := uint(bits.Len(uint(n - 1)))
		for _, width := range []uint{0, 1, 7, 8, 9, 16, 23, 40} {
			for _, distinct := range []uint64{2, 1 << width} {
				keys := make([]uint64, n)
				offsets := make([]uint64, n)
				for i := range keys {
					offsets[i] = r.Uint64N(min(distinct, 1<<width))
					keys[i] = offsets[i]<<from | uint64(i)
				}
				want := make([]int32, n)
				for i := range want {
					want[i] = int32(i)
				}
				slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(offsets[a], offsets[b]) })
				perm := make([]int32, n)
				if err := s.SortKeys(keys, from, width, perm); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(perm, want) {
					t.Fatalf("%d keys of %d bits (%d values): not a stable sort's order", n, width, distinct)
				}
			}
		}
	}
	if err := s.SortKeys(make([]uint64, 3), 2, 1, make([]int32, 2)); err == nil {
		t.Fatal("a permutation of another length accepted")
	}
	if err := s.SortKeys(make([]uint64, 3), 30, 40, make([]int32, 3)); err == nil {
		t.Fatal("keys of 70 bits accepted")
	}
}

// disorderedHits are n hits at random on a 64 x 64 sensor, step apart,
// read out with each delayed by up to window (ties kept in order), and
// their index in ToT.
func disorderedHits(r *rand.Rand, n int, step, window pixel.Time) *pixel.Hits {
	h := uniformHits(r, n, 64, 64, step)
	at := make([]pixel.Time, n)
	order := make([]int, n)
	for i := range at {
		at[i], order[i] = h.ToA[i]+pixel.Time(r.Int64N(int64(window)+1)), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	out := &pixel.Hits{}
	for _, i := range order {
		out.Append(h.X[i], h.Y[i], h.ToA[i], uint16(i))
	}
	return out
}

// TestDeviceSorterMatchesHost: the reorder stage with its radix sorts on
// the device releases the host's hits in the host's order, on streams
// disordered by a fraction of the window to many times it (late hits),
// on the Timepix3's time grid and off it; with a device that fails at any
// command, the host sorts from that batch on, Err reports the failure,
// and the hits are the same.
func TestDeviceSorterMatchesHost(t *testing.T) {
	ctx, dev := keySorter(t)
	r := rand.New(rand.NewPCG(7, 8))
	for k, c := range []struct {
		step, delay, window pixel.Time
	}{{100, 20000, 20000}, {100, 200000, 20000}, {37, 5000, 5000}, {1, 3000, 100}} {
		h := disorderedHits(r, 30000, c.step, c.delay)
		sorter := func(dev pixel.KeySorter) *pixel.Sorter {
			s, err := pixel.NewSorter(c.window, 0)
			if err != nil {
				t.Fatal(err)
			}
			s.SetKeySorter(dev)
			return s
		}
		seed := r.Uint64()
		want := pixel.SortStream(rand.New(rand.NewPCG(seed, 1)), sorter(nil), h, 5000)
		s := sorter(dev)
		got := pixel.SortStream(rand.New(rand.NewPCG(seed, 1)), s, h, 5000)
		if err := errors.Join(s.Err(), equalHits(got, want)); err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		if s.DeviceBatches() == 0 {
			t.Fatalf("case %d: no batch sorted on the device", k)
		}
		for _, after := range []int{0, 3, 11, 40} {
			ctx.InjectFailureAfter(after, opencl.ErrLost)
			s := sorter(dev)
			got := pixel.SortStream(rand.New(rand.NewPCG(seed, 1)), s, h, 5000)
			ctx.InjectFailure(nil)
			if err := equalHits(got, want); err != nil {
				t.Fatalf("case %d, failing after %d commands: %v", k, after, err)
			}
			if !errors.Is(s.Err(), opencl.ErrLost) {
				t.Fatalf("case %d, failing after %d commands: Err %v", k, after, s.Err())
			}
		}
	}
}

// equalHits compares every column of two hit lists.
func equalHits(got, want *pixel.Hits) error {
	if !slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) || !slices.Equal(got.ToA, want.ToA) || !slices.Equal(got.ToT, want.ToT) || !slices.Equal(got.E, want.E) {
		return fmt.Errorf("%d hits out, want %d in the host's order", got.Len(), want.Len())
	}
	return nil
}

// BenchmarkDeviceSort measures the reorder stage on a readout at 40
// Mhit/s with each hit delayed by up to 50 µs, in the reader's batches of
// 2^16 hits, sorting on the host and on the device (by the keys a
// work-item owns): the rate through the sorter, and the device's kernels
// and transfers per batch (kernel-ms, xfer-ms).
func BenchmarkDeviceSort(b *testing.B) {
	ctx := devicetest.Open(b)
	dev, err := pixelcl.NewSorter(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	const n, batch = 1 << 21, 1 << 16
	h := disorderedHits(rand.New(rand.NewPCG(1, 2)), n, 1600, 50*pixel.Microsecond)
	var batches []pixel.Hits
	for i := 0; i < n; i += batch {
		var b pixel.Hits
		b.AppendRange(h, i, min(n, i+batch))
		batches = append(batches, b)
	}
	for _, where := range []string{"host", "device/run=32", "device/run=1024"} {
		b.Run(where, func(b *testing.B) {
			var run int
			fmt.Sscanf(where, "device/run=%d", &run)
			dev.SetRun(run)
			var out pixel.Hits
			dev.TakeTimings()
			for b.Loop() {
				s, err := pixel.NewSorter(60*pixel.Microsecond, 0)
				if err != nil {
					b.Fatal(err)
				}
				if run > 0 {
					s.SetKeySorter(dev)
				}
				for i := range batches {
					out.Reset()
					s.PushTo(&out, &batches[i])
				}
				if err := s.Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mhit/s")
			if tm := dev.TakeTimings(); tm.Batches > 0 {
				b.ReportMetric(tm.Kernels.Seconds()*1e3/float64(tm.Batches), "kernel-ms")
				b.ReportMetric((tm.Upload+tm.Download).Seconds()*1e3/float64(tm.Batches), "xfer-ms")
			}
		})
	}
}
