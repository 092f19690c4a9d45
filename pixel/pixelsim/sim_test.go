package pixelsim

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// clusterSizes simulates a dataset and clusters it exactly.
func clusterSizes(t *testing.T, opt Options) (mean, std float64, n int) {
	t.Helper()
	c, err := pixel.NewClusterer(pixel.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var sizes []float64
	collect := func(cl *pixel.Clusters) {
		for _, s := range cl.Size {
			sizes = append(sizes, float64(s))
		}
	}
	err = Generate(opt, func(h *pixel.Hits) error {
		collect(c.Add(h))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	collect(c.Flush())
	for _, s := range sizes {
		mean += s
	}
	mean /= float64(len(sizes))
	for _, s := range sizes {
		std += (s - mean) * (s - mean)
	}
	return mean, math.Sqrt(std / float64(len(sizes))), len(sizes)
}

func TestDatasetSizes(t *testing.T) {
	for _, d := range Datasets {
		hits := 400000
		if testing.Short() {
			hits = max(50000, int(50*d.MeanSize)) // at least 50 clusters
		}
		mean, std, n := clusterSizes(t, Options{Dataset: d, Hits: hits, Seed: 1, RateMHz: 0.05})
		t.Logf("%-8s mean %7.2f std %7.2f over %d clusters; paper: %s", d.Name, mean, std, n, d.Paper)
		tol := 0.1
		if testing.Short() {
			tol = 0.3
		}
		if math.Abs(mean-d.MeanSize) > tol*d.MeanSize {
			t.Errorf("%s: mean cluster size %.2f, the paper's %.2f", d.Name, mean, d.MeanSize)
		}
	}
}

func TestReproducibleAndOrdered(t *testing.T) {
	run := func(seed uint64, disorder pixel.Time) pixel.Hits {
		var all pixel.Hits
		err := Generate(Options{Dataset: Datasets[1], Hits: 100000, Seed: seed, RateMHz: 40, Disorder: disorder}, func(h *pixel.Hits) error {
			all.AppendRange(h, 0, h.Len())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	a, b, c := run(3, 0), run(3, 0), run(4, 0)
	if a.Len() != 100000 || !slices.Equal(a.ToA, b.ToA) || !slices.Equal(a.X, b.X) || slices.Equal(a.ToA, c.ToA) {
		t.Fatal("same seed must give the same stream, another seed another")
	}
	if !slices.IsSorted(a.ToA) {
		t.Fatal("stream without disorder is not sorted")
	}
	const window = 50 * pixel.Microsecond
	d := run(3, window)
	if slices.IsSorted(d.ToA) {
		t.Fatal("disorder had no effect")
	}
	maxSoFar := d.ToA[0]
	for i, t0 := range d.ToA {
		if t0 < maxSoFar-window {
			t.Fatalf("hit %d is %v ns before an earlier hit: not %v-ordered", i, (maxSoFar - t0).Ns(), window.Ns())
		}
		maxSoFar = max(maxSoFar, t0)
	}
	ds, as := slices.Clone(d.ToA), slices.Clone(a.ToA)
	slices.Sort(ds)
	if !slices.Equal(ds, as) {
		t.Fatal("disorder changed the hits, not only their order")
	}
}

// TestReadoutOrder checks the readout order against a stable sort, with
// keys packed (many equal ones) and too far apart to pack.
func TestReadoutOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var order []int
	var packed []uint64
	for trial := range 300 {
		key := make([]pixel.Time, r.IntN(2000))
		spread := []int64{1, 5, 1 << 20, 1 << 40, math.MaxInt64}[trial%5]
		for i := range key {
			key[i] = pixel.Time(r.Int64N(spread))
			if spread == math.MaxInt64 { // unpackable, with equal keys
				key[i] = []pixel.Time{-1 << 62, -key[i], 0, 1 << 62, key[i]}[r.IntN(5)]
			}
		}
		want := make([]int, len(key))
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(key[a], key[b]) })
		order, packed = readoutOrder(order, packed, key)
		if !slices.Equal(order, want) {
			t.Fatalf("trial %d (%d keys, spread %d): order differs from a stable sort", trial, len(key), spread)
		}
	}
}

// TestSimulationPinned pins the simulated hits of several datasets (the
// hashes of the generator as first written), so that a faster generator
// is the same generator.
func TestSimulationPinned(t *testing.T) {
	for _, c := range []struct {
		dataset  string
		disorder pixel.Time
		want     string
	}{
		{"gamma", 0, "4c2a485babac92bc333a2ae3b3c0cb4b9502f357034dcfe81cd7769fc670de45"},
		{"gamma", 50 * pixel.Microsecond, "f9651814b22b1080d54e6f1ca10d78175661563c0faf5547fb6a04e5e7f45e46"},
		{"pion45", 50 * pixel.Microsecond, "6510f605d04f19b8a6b3e4122cf034c48d3b9a8d3b15bb40046c943dcf8792c2"},
		{"pb90", 0, "849bf1f03a8504e7960c39133311eef1fd34fe68715044004e3bfdb51cfbd839"},
		{"pblarge3", 50 * pixel.Microsecond, "8d7c82b335532239d580857255361ca4888712330d41c81a8b5677f661721542"},
	} {
		d, err := DatasetByName(c.dataset)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		var b []byte
		err = Generate(Options{Dataset: d, Hits: 200000, Seed: 7, RateMHz: 40, Disorder: c.disorder}, func(hits *pixel.Hits) error {
			for i := range hits.Len() {
				b = binary.LittleEndian.AppendUint16(b[:0], hits.X[i])
				b = binary.LittleEndian.AppendUint16(b, hits.Y[i])
				b = binary.LittleEndian.AppendUint64(b, uint64(hits.ToA[i]))
				b = binary.LittleEndian.AppendUint16(b, hits.ToT[i])
				h.Write(b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.want {
			t.Errorf("%s, disorder %v: hits hash %s, want %s", c.dataset, c.disorder, got, c.want)
		}
	}
}
