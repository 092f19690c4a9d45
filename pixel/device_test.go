package pixel_test

import (
	"errors"
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
// clock restarts), in buffers and chunks of random sizes.
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
		c.KeepMembers(true)
		got := pixel.Feed(r, c, h)
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		if err := pixel.EqualClusters(got, want); err != nil {
			t.Fatalf("seed %d (%d hits, dt %d, buffers of %d, chunks of %d): %v", seed, h.Len(), cfg.Dt, buffer, chunk, err)
		}
		if cs, ss := c.Stats(), seq.Stats(); cs != ss {
			t.Fatalf("seed %d: stats %+v, sequential %+v", seed, cs, ss)
		}
	})
}

// TestDeviceLost: a device that fails during a run is reported by Err,
// and the failed buffer is clustered on the host: nothing is lost; the
// labeler then serves another stream.
func TestDeviceLost(t *testing.T) {
	ctx, lab := labeler(t)
	r := rand.New(rand.NewPCG(5, 6))
	h := &pixel.Hits{}
	for i := range 3000 {
		h.X, h.Y = append(h.X, uint16(r.IntN(16))), append(h.Y, uint16(r.IntN(16)))
		h.ToA, h.ToT = append(h.ToA, pixel.Time(i*40)), append(h.ToT, uint16(1+r.IntN(50)))
	}
	cfg := pixel.Config{Dt: 200, Width: 16, Height: 16}
	seq, err := pixel.NewClusterer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seq.KeepMembers(true)
	want := pixel.Feed(r, seq, h)
	c, err := pixel.NewChunkedClusterer(cfg, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.SetLabeler(lab)
	pixel.SetSizes(c, 700, 64)
	c.KeepMembers(true)
	ctx.InjectFailure(opencl.ErrLost)
	got := pixel.Feed(r, c, h)
	if err := c.Err(); !errors.Is(err, opencl.ErrLost) {
		t.Fatalf("Err %v", err)
	}
	if err := pixel.EqualClusters(got, want); err != nil {
		t.Fatal(err)
	}
	if want.Len() < 100 {
		t.Fatalf("only %d clusters", want.Len())
	}
	// The labeler serves the next stream as if nothing had happened.
	c, err = pixel.NewChunkedClusterer(cfg, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.SetLabeler(lab)
	pixel.SetSizes(c, 700, 64)
	c.KeepMembers(true)
	got = pixel.Feed(r, c, h)
	if err := errors.Join(c.Err(), pixel.EqualClusters(got, want)); err != nil {
		t.Fatalf("after the failure: %v", err)
	}
}
