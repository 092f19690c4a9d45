package pixel

import (
	"math/rand/v2"
	"testing"
)

// FuzzClusterers feeds arbitrary streams (late hits, clock resets, hits
// outside the sensor, any definition, dt and LongSpan) to the sequential
// clusterer folding often and to one keeping every hit, which must give
// the same clusters in increasing output order; on streams without late
// hits the lanes and the chunked clusterer must give them too.
func FuzzClusterers(f *testing.F) {
	f.Add([]byte{0, 10, 3, 2, 1, 1, 5, 1, 2, 1, 5, 1, 1, 2, 250, 1, 7, 7, 3, 1})
	f.Add([]byte{1, 0, 1, 1, 3, 3, 0, 1, 3, 3, 0, 1, 3, 3, 0, 1, 4, 4, 200, 1})
	f.Add([]byte{2, 255, 8, 9, 0, 0, 1, 1, 8, 8, 1, 1, 0, 0, 128, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		cfg := Config{Definition: Definition(data[0] % 3), DtMax: Time(data[1]), Width: 8, Height: 8,
			Restart: 2000, longSpan: int64(data[2]) + 1}
		foldAt := int(data[3]) + 1
		var h Hits
		now, sorted := Time(1<<20), true
		// At most 1024 hits: the chunked clusterer with tiny buffers and
		// chunks is quadratic when all hits are within dt of each other.
		for b := data[4:]; len(b) >= 4 && h.Len() < 1024; b = b[4:] {
			step := Time(int8(b[2]))
			sorted = sorted && step >= 0
			now += step
			h.Append(uint16(b[0]%9), uint16(b[1]%9), now, uint16(b[3]))
		}
		folding, _ := NewClusterer(cfg)
		folding.foldAt = foldAt
		keeping, _ := NewClusterer(cfg)
		keeping.KeepMembers(true)
		// The same batches: which clusters a late hit finds still open
		// depends on when the others were emitted.
		batches := func() *rand.Rand { return rand.New(rand.NewPCG(uint64(len(data)), 1)) }
		want := feed(batches(), keeping, &h)
		checkKeys(t, want)
		want.Members, want.Start = Hits{}, []int{0}
		if err := equalClusters(feed(batches(), folding, &h), want); err != nil {
			t.Fatalf("folding: %v", err)
		}
		if folding.Stats() != keeping.Stats() {
			t.Fatalf("stats %+v, keeping the hits %+v", folding.Stats(), keeping.Stats())
		}
		if !sorted {
			return
		}
		lanes, _ := NewLanes(cfg, 2, 1+int(data[3]%16))
		lanes.check0, lanes.foldAt = 1+int(data[2]%8), foldAt
		if err := equalClusters(feed(batches(), lanes, &h), want); err != nil {
			t.Fatalf("lanes: %v", err)
		}
		if cfg.Definition != Local {
			return
		}
		chunked, _ := NewChunkedClusterer(cfg, 2, 1+int(data[3]%32))
		chunked.chunk, chunked.foldMin = 1+int(data[2]%16), 1+int(data[3]%8)
		if err := equalClusters(feed(batches(), chunked, &h), want); err != nil {
			t.Fatalf("chunked: %v", err)
		}
	})
}

// checkKeys checks that the clusters are in strictly increasing output
// order.
func checkKeys(t *testing.T, c *Clusters) {
	t.Helper()
	for i := 1; i < c.Len(); i++ {
		if c.key[i] <= c.key[i-1] {
			t.Fatalf("cluster %d has key %d after %d", i, c.key[i], c.key[i-1])
		}
	}
}
