package pixel

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refCompare computes the agreement from the definition with sets, for
// hits that are all distinct.
func refCompare(a, b []int64) (iou, hitIoU float64, differA, differB int64) {
	members := func(labels []int64) map[int64]map[int]bool {
		m := map[int64]map[int]bool{}
		for i, l := range labels {
			if m[l] == nil {
				m[l] = map[int]bool{}
			}
			m[l][i] = true
		}
		return m
	}
	ma, mb := members(a), members(b)
	identical := 0
	var sum, weighted float64
	for _, la := range sortedKeys(ma) {
		bestN, bestL := -1, int64(0)
		for _, lb := range sortedKeys(mb) {
			n := 0
			for i := range ma[la] {
				if mb[lb][i] {
					n++
				}
			}
			if n > bestN {
				bestN, bestL = n, lb
			}
		}
		u := len(ma[la]) + len(mb[bestL]) - bestN
		sum += float64(bestN) / float64(u)
		weighted += float64(bestN) / float64(u) * float64(len(ma[la]))
		if u == bestN {
			identical++
		}
	}
	return sum / float64(len(ma)), weighted / float64(len(a)), int64(len(ma) - identical), int64(len(mb) - identical)
}

func sortedKeys(m map[int64]map[int]bool) []int64 {
	var k []int64
	for l := range m {
		k = append(k, l)
	}
	for i := range k {
		for j := i + 1; j < len(k); j++ {
			if k[j] < k[i] {
				k[i], k[j] = k[j], k[i]
			}
		}
	}
	return k
}

func TestCompareMatchesDefinition(t *testing.T) {
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 3))
		n := 1 + r.IntN(60)
		var a, b Labelled
		for i := range n {
			a.Hits.Append(uint16(i%7), uint16(i/7), Time(r.IntN(5)), uint16(i))
			a.Labels = append(a.Labels, int64(r.IntN(1+n/3)))
			b.Labels = append(b.Labels, int64(r.IntN(1+n/3)))
		}
		// B lists the same hits in another order.
		perm := r.Perm(n)
		bl := make([]int64, n)
		for k, i := range perm {
			b.Hits.AppendFrom(&a.Hits, i)
			bl[k] = b.Labels[i]
		}
		got := Compare(&a, &Labelled{b.Hits, bl})
		iou, hitIoU, da, db := refCompare(a.Labels, b.Labels)
		if got.Hits != int64(n) || got.OnlyA != 0 || got.OnlyB != 0 || got.DifferA != da || got.DifferB != db ||
			math.Abs(got.IoU-iou) > 1e-12 || math.Abs(got.HitIoU-hitIoU) > 1e-12 {
			t.Fatalf("seed %d: %+v, want IoU %v hit IoU %v, differ %d/%d", seed, got, iou, hitIoU, da, db)
		}
	}
}

func TestCompareRelabelledAndMissing(t *testing.T) {
	var a, b Labelled
	for i := range 10 {
		a.Hits.Append(uint16(i), 0, Time(i), 1)
		a.Labels = append(a.Labels, int64(i/5))
	}
	for i := range 9 { // B lacks the last hit and numbers clusters differently
		b.Hits.Append(uint16(i), 0, Time(i), 1)
		b.Labels = append(b.Labels, int64(100-i/5))
	}
	b.Hits.Append(50, 50, 50, 1)
	b.Labels = append(b.Labels, 7)
	got := Compare(&a, &b)
	want := Agreement{Hits: 9, OnlyA: 1, OnlyB: 1, ClustersA: 2, ClustersB: 3, DifferA: 0, DifferB: 1, IoU: 1, HitIoU: 1}
	if got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
}

// TestAttach: hits labelled with their clusters' ids, shuffled, come
// back as the members the clusterer kept.
func TestAttach(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h Hits
	for i := range 20000 {
		h.Append(uint16(r.IntN(64)), uint16(r.IntN(64)), Time(i)*10*Nanosecond, uint16(1+r.IntN(100)))
	}
	c, _ := NewClusterer(DefaultConfig())
	c.KeepMembers(true)
	want := &Clusters{}
	want.Reset()
	c.AddTo(want, &h)
	c.FlushTo(want)
	var l Labelled
	for i := range want.Len() {
		for k := want.Start[i]; k < want.Start[i+1]; k++ {
			l.Hits.AppendFrom(&want.Members, k)
			l.Labels = append(l.Labels, want.ID[i])
		}
	}
	perm := r.Perm(len(l.Labels))
	var shuffled Labelled
	for _, k := range perm {
		shuffled.Hits.AppendFrom(&l.Hits, k)
		shuffled.Labels = append(shuffled.Labels, l.Labels[k])
	}
	got := *want
	got.Members, got.Start = Hits{}, nil
	if err := shuffled.Attach(&got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Start, want.Start) || !slices.Equal(got.Members.ToA, want.Members.ToA) || !slices.Equal(got.Members.X, want.Members.X) || !slices.Equal(got.Members.ToT, want.Members.ToT) {
		t.Fatal("attached members differ from the clusterer's")
	}
	shuffled.Labels[0] = -5 // a hit of no cluster of the file
	if err := shuffled.Attach(&got); err == nil || !strings.Contains(err.Error(), "the labels give it") {
		t.Errorf("a hit short: %v", err)
	}
}
