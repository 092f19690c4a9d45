package pixel_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hitflow/hitflow/device/opencl"
	"github.com/hitflow/hitflow/internal/devicetest"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pixelcl"
)

// labeler opens the test's device (see devicetest.Open) and the chunk
// step on it.
func labeler(t *testing.T) (*opencl.Context, *pixelcl.Labeler) {
	ctx := devicetest.Open(t)
	l, err := pixelcl.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return ctx, l
}

// TestDeviceMatchesSequential: the chunked union-find with its chunk step
// on the device gives the sequential clusterer's clusters, features and
// counts on every stream of the differential tests (hot pixels, tracks
// crossing many chunks, clusters larger than a chunk, pile-up, late hits,
// clock restarts), in buffers and chunks of random sizes. Keeping the
// members, the host sums the clusters; else the device sums the closed
// ones, unless told not to. The matrices' entries are 16 or 32 bits.
func TestDeviceMatchesSequential(t *testing.T) {
	_, lab := labeler(t)
	pixel.AgainstSequential(t, 60, 11, func(t *testing.T, r *rand.Rand, seed int, cfg pixel.Config, h *pixel.Hits, seq *pixel.Clusterer, want *pixel.Clusters) {
		if cfg.Definition != pixel.Local {
			return
		}
		c, err := pixel.NewChunkedClusterer(cfg, 1+r.IntN(4), 0)
		if err != nil {
			t.Fatal(err)
		}
		c.SetLabeler(lab)
		buffer, chunk := 1+r.IntN(1+h.Len()), 1+r.IntN(200)
		pixel.SetSizes(c, buffer, chunk)
		keep := r.IntN(2) == 0
		c.KeepMembers(keep)
		lab.SetSums(r.IntN(4) != 0)
		lab.SetWideMatrices(r.IntN(2) == 0)
		got := pixel.Feed(r, c, h)
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		equal := pixel.EqualFeatures
		if keep {
			equal = pixel.EqualClusters
		}
		if err := equal(got, want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, buffers of %d, chunks of %d, members kept %v): %v", seed, h.Len(), cfg.Dt, buffer, chunk, keep, err)
		}
		if cs, ss := c.Stats(), seq.Stats(); cs != ss {
			t.Fatalf("seed %d: stats %+v, sequential %+v", seed, cs, ss)
		}
	})
}

// TestDeviceLost: a device that fails at any command of a run is
// reported by Err, and the failed buffer is clustered on the host:
// nothing is lost; the labeler then serves another stream. With members
// kept the device labels only; else it also sums.
func TestDeviceLost(t *testing.T) {
	ctx, lab := labeler(t)
	r := rand.New(rand.NewPCG(5, 6))
	h, cfg, want := uniformCase(t, r, 3000, 16, 40, 200)
	if want.Len() < 100 {
		t.Fatalf("only %d clusters", want.Len())
	}
	run := func(keep bool) error {
		c, err := pixel.NewChunkedClusterer(cfg, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		c.SetLabeler(lab)
		pixel.SetSizes(c, 700, 64)
		c.KeepMembers(keep)
		got := pixel.Feed(r, c, h)
		equal := pixel.EqualFeatures
		if keep {
			equal = pixel.EqualClusters
		}
		if err := equal(got, want); err != nil {
			t.Fatalf("members kept %v: %v", keep, err)
		}
		return c.Err()
	}
	lab.SetSums(true)
	for _, keep := range []bool{true, false} {
		failed := 0
		for after := 0; ; after++ {
			ctx.InjectFailureAfter(after, opencl.ErrLost)
			err := run(keep)
			if err == nil {
				ctx.InjectFailure(nil) // not reached: disarmed
				break
			}
			if !errors.Is(err, opencl.ErrLost) {
				t.Fatalf("members kept %v, failing after %d commands: %v", keep, after, err)
			}
			failed++
			// The labeler serves the next stream as if nothing had happened.
			if err := run(keep); err != nil {
				t.Fatalf("members kept %v, after failing at %d: %v", keep, after, err)
			}
		}
		if failed < 20 {
			t.Fatalf("members kept %v: only %d runs failed", keep, failed)
		}
	}
}

// TestDeviceEnergies: the device's energy sums and peaks are the host's
// bit for bit on the energies at the edges of their conversion: NaN and
// infinities, both zeros, subnormals, the clamp at MaxEnergy and values
// whose fixed-point form is cut.
func TestDeviceEnergies(t *testing.T) {
	_, lab := labeler(t)
	edges := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-40, 0x1.8p-41, -0x1.fffffep-40,
		pixel.MaxEnergy, -pixel.MaxEnergy, math.Nextafter32(pixel.MaxEnergy, 0), 1e30, -1e30, 3.3, -7.25, 1e-7}
	r := rand.New(rand.NewPCG(7, 8))
	h := &pixel.Hits{}
	for i := range 20000 {
		// Clusters of 1 to 3 hits on a pixel and its right neighbour.
		c := i / 3
		h.X, h.Y = append(h.X, uint16(c%50*2+i%2)), append(h.Y, uint16(c/50%50))
		h.ToA, h.ToT = append(h.ToA, pixel.Time(c*1000+i%3)), append(h.ToT, uint16(1+r.IntN(50)))
		h.E = append(h.E, edges[r.IntN(len(edges))])
	}
	cfg := pixel.Config{Dt: 10, Width: 100, Height: 50}
	seq, err := pixel.NewClusterer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := pixel.Feed(r, seq, h)
	c, err := pixel.NewChunkedClusterer(cfg, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.SetLabeler(lab)
	lab.SetSums(true)
	pixel.SetSizes(c, 5000, 300)
	got := pixel.Feed(r, c, h)
	if err := errors.Join(c.Err(), pixel.EqualFeatures(got, want)); err != nil {
		t.Fatal(err)
	}
	if want.Len() < 6000 {
		t.Fatalf("only %d clusters", want.Len())
	}
}

// TestDeviceTimings: the labeler counts every buffer it labels and its
// hits, times its transfers and kernels within its calls, the sums' kernels
// only when it sums, and starts afresh once taken.
func TestDeviceTimings(t *testing.T) {
	_, lab := labeler(t)
	r := rand.New(rand.NewPCG(3, 4))
	h := uniformHits(r, 30000, 100, 50, 50)
	cfg := pixel.Config{Dt: 100, Width: 100, Height: 50}
	for _, sums := range []bool{false, true} {
		c, err := pixel.NewChunkedClusterer(cfg, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		c.SetLabeler(lab)
		lab.SetSums(sums)
		pixel.SetSizes(c, 5000, 300)
		lab.TakeTimings()
		pixel.Feed(r, c, h)
		tm := lab.TakeTimings()
		if tm.Buffers < 6 || tm.Hits < h.Len() || tm.Upload <= 0 || tm.Download <= 0 || tm.Label <= 0 || (tm.Sums > 0) != sums ||
			tm.Wall < tm.Upload+tm.Download {
			t.Fatalf("sums %v: %+v", sums, tm)
		}
		if again := lab.TakeTimings(); again != (pixelcl.Timings{}) {
			t.Fatalf("taken twice: %+v", again)
		}
	}
}

// uniformHits are n hits on pixels drawn uniformly from a width x height
// sensor, one every step ticks, ToT 1 to 50.
func uniformHits(r *rand.Rand, n, width, height int, step pixel.Time) *pixel.Hits {
	h := &pixel.Hits{}
	for i := range n {
		h.X, h.Y = append(h.X, uint16(r.IntN(width))), append(h.Y, uint16(r.IntN(height)))
		h.ToA, h.ToT = append(h.ToA, pixel.Time(i)*step), append(h.ToT, uint16(1+r.IntN(50)))
	}
	return h
}

// uniformCase is n hits at random on a side x side sensor, step apart,
// clustered with dt, and the sequential clusterer's clusters of them,
// members kept.
func uniformCase(t *testing.T, r *rand.Rand, n, side int, step, dt pixel.Time) (*pixel.Hits, pixel.Config, *pixel.Clusters) {
	h := uniformHits(r, n, side, side, step)
	cfg := pixel.Config{Dt: dt, Width: side, Height: side}
	seq, err := pixel.NewClusterer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seq.KeepMembers(true)
	return h, cfg, pixel.Feed(r, seq, h)
}

// TestDeviceBecomesCalibrated: a stream whose energies start midway gives
// the same clusters with the device summing as on the workers alone (see
// BecomesCalibrated).
func TestDeviceBecomesCalibrated(t *testing.T) {
	_, lab := labeler(t)
	lab.SetSums(true)
	if err := pixel.BecomesCalibrated(lab); err != nil {
		t.Fatal(err)
	}
}

// TestDeviceLongChunks: chunks of more than 65,535 hits, which 16-bit
// matrix entries cannot index, take 32-bit ones, and give the sequential
// clusters; shorter chunks take 16-bit entries.
func TestDeviceLongChunks(t *testing.T) {
	_, lab := labeler(t)
	r := rand.New(rand.NewPCG(9, 10))
	h, cfg, want := uniformCase(t, r, 140000, 16, 10, 1000)
	for _, chunk := range []int{70000, 5000} {
		c, err := pixel.NewChunkedClusterer(cfg, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		c.SetLabeler(lab)
		pixel.SetSizes(c, 140000, chunk)
		lab.TakeTimings()
		got := pixel.Feed(r, c, h)
		if err := errors.Join(c.Err(), pixel.EqualFeatures(got, want)); err != nil {
			t.Fatalf("chunks of %d: %v", chunk, err)
		}
		if tm := lab.TakeTimings(); (tm.Wide > 0) != (chunk > math.MaxUint16) || tm.Buffers == 0 {
			t.Fatalf("chunks of %d: %d of %d buffers with 32-bit matrices", chunk, tm.Wide, tm.Buffers)
		}
	}
}

// BenchmarkDeviceLayouts measures the chunked union-find with its chunk
// step on the device, in buffers of 2^21 hits as on a GPU, by the
// matrices' entries (the paper's 16 bits or 32) and the chunk length: the
// rate through the clusterer, and the chunk step's time on the device per
// buffer (label-ms).
func BenchmarkDeviceLayouts(b *testing.B) {
	ctx := devicetest.Open(b)
	lab, err := pixelcl.New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer lab.Close()
	for _, ds := range []string{"gamma", "pion45"} {
		batches := simulated(b, ds, 1<<22, 10)
		for _, chunk := range []int{1024, 256} {
			for _, bits := range []int{16, 32} {
				b.Run(fmt.Sprintf("%s/chunk=%d/matrix=%d", ds, chunk, bits), func(b *testing.B) {
					c, err := pixel.NewChunkedClusterer(pixel.DefaultConfig(), 0, 0)
					if err != nil {
						b.Fatal(err)
					}
					c.SetLabeler(lab)
					pixel.SetSizes(c, 1<<21, chunk)
					lab.SetWideMatrices(bits == 32)
					lab.TakeTimings()
					benchStream(b, batches, c)
					if tm := lab.TakeTimings(); tm.Buffers > 0 {
						b.ReportMetric(tm.Label.Seconds()*1e3/float64(tm.Buffers), "label-ms")
					}
					if err := c.Err(); err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}
