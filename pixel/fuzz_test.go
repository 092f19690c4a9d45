package pixel

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzClusterers feeds arbitrary streams (late hits, clock resets, hits
// outside the sensor, energies out of range, any definition, dt and
// LongSpan) to the sequential clusterer folding often and to one keeping
// every hit, which must give the same clusters in increasing output
// order; on streams without late hits the lanes and the chunked
// clusterer must give them too.
func FuzzClusterers(f *testing.F) {
	f.Add([]byte{0, 10, 3, 2, 1, 1, 5, 1, 2, 1, 5, 1, 1, 2, 250, 1, 7, 7, 3, 1})
	f.Add([]byte{1, 0, 1, 1, 3, 3, 0, 1, 3, 3, 0, 1, 3, 3, 0, 1, 4, 4, 200, 1})
	f.Add([]byte{2, 255, 8, 9, 0, 0, 1, 1, 8, 8, 1, 1, 0, 0, 128, 1, 1, 1, 1, 1})
	f.Add([]byte{8, 40, 5, 3, 1, 1, 5, 255, 2, 1, 5, 254, 2, 2, 5, 253, 3, 3, 5, 9, 6, 6, 90, 252})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		cfg := Config{Definition: Definition(data[0] % 3), Dt: Time(data[1]), Width: 8, Height: 8,
			Restart: 2000, longSpan: int64(data[2]) + 1}
		foldAt := int(data[3]) + 1
		var h Hits
		now, sorted := Time(1<<20), true
		// Energies, when data[0] says so, from the ToT byte: the top
		// values out of any range (see MaxEnergy).
		calibrated := data[0]&8 != 0
		energy := func(b byte) float32 {
			switch b {
			case 255:
				return float32(math.NaN())
			case 254:
				return float32(math.Inf(1))
			case 253:
				return -1e30
			}
			return float32(b) * 0.37
		}
		// At most 1024 hits: the chunked clusterer with tiny buffers and
		// chunks is quadratic when all hits are within dt of each other.
		for b := data[4:]; len(b) >= 4 && h.Len() < 1024; b = b[4:] {
			step := Time(int8(b[2]))
			sorted = sorted && step >= 0
			now += step
			h.Append(uint16(b[0]%9), uint16(b[1]%9), now, uint16(b[3]))
			if calibrated {
				h.E = append(h.E, energy(b[3]))
			}
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

// FuzzSorter pushes arbitrary batches (times going back a little, which
// the window absorbs, or more, which makes late hits, or past the restart
// gap) through the sorter, and compares what it releases, and when, with
// a model that follows its documentation hit by hit.
func FuzzSorter(f *testing.F) {
	f.Add([]byte{5, 1, 3, 0, 2, 0, 250, 1, 7, 0, 128, 0, 4, 1, 1, 0})
	f.Add([]byte{0, 0, 1, 0, 255, 1, 255, 0, 2, 0, 2, 1})
	f.Add([]byte{40, 3, 10, 0, 200, 0, 100, 1, 20, 0, 156, 1, 5, 0, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		window, restart := Time(data[0]), Time(data[0])+1+Time(data[1])*4
		s, err := NewSorter(window, restart)
		if err != nil {
			t.Fatal(err)
		}
		m := sorterModel{window: window, restart: restart}
		m.reset()
		var got, batch Hits
		now := Time(1 << 20)
		for b := data[2:]; len(b) >= 2 && m.arrived < 1<<16; b = b[2:] {
			now += Time(int8(b[0]))
			batch.Append(1, 2, now, uint16(m.arrived))
			m.add(now)
			if b[1]&1 == 0 { // the batch goes on
				continue
			}
			if b[1]&2 == 0 {
				s.PushTo(&got, &batch)
			} else {
				o := s.Push(&batch)
				got.AppendRange(o, 0, o.Len())
			}
			m.endBatch()
			if !slices.Equal(got.ToT, m.out) {
				t.Fatalf("after %d hits: released %v, want %v", m.arrived, got.ToT, m.out)
			}
			batch.Reset()
		}
		s.PushTo(&got, &batch)
		s.FlushTo(&got)
		m.endBatch()
		m.flush()
		if !slices.Equal(got.ToT, m.out) {
			t.Fatalf("at the end: released %v, want %v", got.ToT, m.out)
		}
		if len(m.out) != m.arrived {
			t.Fatalf("the model released %d of %d hits", len(m.out), m.arrived)
		}
	})
}

// sorterModel is the Sorter as its documentation says, one hit at a time:
// a hit more than restart earlier than the latest releases everything
// held and starts afresh; one earlier than a hit already released goes
// out at once; the others wait until a hit at least window later has come
// (checked at the end of each batch), and go out by time, then arrival.
type sorterModel struct {
	window, restart   Time
	held              []modelHit
	released, maxSeen Time
	arrived           int
	out               []uint16 // arrival numbers, in release order
}

type modelHit struct {
	t Time
	n int
}

func (m *sorterModel) reset() { m.released, m.maxSeen = -1<<63, -1<<63 }

func (m *sorterModel) add(t Time) {
	if clockReset(m.maxSeen, t, m.restart) {
		m.endBatch()
		m.flush()
		m.reset()
	}
	m.maxSeen = max(m.maxSeen, t)
	if t < m.released {
		m.out = append(m.out, uint16(m.arrived))
	} else {
		m.held = append(m.held, modelHit{t, m.arrived})
	}
	m.arrived++
}

// endBatch releases the held hits at least window earlier than the latest.
func (m *sorterModel) endBatch() { m.releaseUpTo(m.maxSeen - m.window) }

func (m *sorterModel) flush() { m.releaseUpTo(1<<63 - 1) }

func (m *sorterModel) releaseUpTo(limit Time) {
	slices.SortFunc(m.held, func(a, b modelHit) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.n, b.n)) })
	k := 0
	for k < len(m.held) && m.held[k].t <= limit {
		m.out = append(m.out, uint16(m.held[k].n))
		m.released = m.held[k].t
		k++
	}
	m.held = m.held[k:]
}
