package pixel

import (
	"cmp"
	"maps"
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

// compareByMaps is Compare as the definition reads, with maps: each
// hit's labels in either file, sorted, paired up in order.
func compareByMaps(a, b *Labelled) Agreement {
	type hit struct {
		toa      Time
		x, y, tt uint16
	}
	labelsOf := func(l *Labelled) map[hit][]int64 {
		m := map[hit][]int64{}
		for i := range l.Labels {
			k := hit{l.Hits.ToA[i], l.Hits.X[i], l.Hits.Y[i], l.Hits.ToT[i]}
			m[k] = append(m[k], l.Labels[i])
		}
		return m
	}
	ma, mb := labelsOf(a), labelsOf(b)
	var ag Agreement
	type pair struct{ a, b int64 }
	inter := map[pair]int64{}
	sizeA, sizeB := map[int64]int64{}, map[int64]int64{}
	for k, las := range ma {
		lbs := mb[k]
		slices.Sort(las)
		slices.Sort(lbs)
		n := min(len(las), len(lbs))
		ag.OnlyA += int64(len(las) - n)
		for i := range n {
			inter[pair{las[i], lbs[i]}]++
			sizeA[las[i]]++
			sizeB[lbs[i]]++
		}
		ag.Hits += int64(n)
	}
	for k, lbs := range mb {
		ag.OnlyB += int64(max(0, len(lbs)-len(ma[k])))
	}
	distinct := func(labels []int64) int64 { return int64(len(slices.Compact(slices.Sorted(slices.Values(labels))))) }
	ag.ClustersA, ag.ClustersB = distinct(a.Labels), distinct(b.Labels)
	best := map[int64]pair{} // per A cluster: B label and shared hits
	for p, n := range inter {
		if bp, ok := best[p.a]; !ok || n > bp.b || n == bp.b && p.b < bp.a {
			best[p.a] = pair{p.b, n}
		}
	}
	identicalB := map[int64]bool{}
	var sum, weighted float64
	for _, la := range slices.Sorted(maps.Keys(best)) {
		bp := best[la]
		iou := float64(bp.b) / float64(sizeA[la]+sizeB[bp.a]-bp.b)
		sum += iou
		weighted += iou * float64(sizeA[la])
		if bp.b == sizeA[la] && bp.b == sizeB[bp.a] {
			identicalB[bp.a] = true
		}
	}
	if len(best) > 0 {
		ag.IoU, ag.HitIoU = sum/float64(len(best)), weighted/float64(ag.Hits)
	}
	ag.DifferA = ag.ClustersA - int64(len(identicalB))
	ag.DifferB = ag.ClustersB - int64(len(identicalB))
	return ag
}

// TestCompareAsByMaps: random label files with repeated hits, hits in
// one file only, labels sparse, negative and large, give the agreement of
// the definition with maps, to the bit.
func TestCompareAsByMaps(t *testing.T) {
	for seed := range 500 {
		r := rand.New(rand.NewPCG(uint64(seed), 17))
		n := r.IntN(300)
		labelOf := func() int64 {
			switch r.IntN(4) {
			case 0:
				return -int64(r.IntN(5))
			case 1:
				return 1<<40 + int64(r.IntN(8))
			default:
				return int64(r.IntN(1 + n/4))
			}
		}
		var a, b Labelled
		for range n {
			x, y, toa, tot := uint16(r.IntN(4)), uint16(r.IntN(3)), Time(r.IntN(6)), uint16(r.IntN(3)) // repeats
			if r.IntN(10) != 0 {
				a.Hits.Append(x, y, toa, tot)
				a.Labels = append(a.Labels, labelOf())
			}
			if r.IntN(10) != 0 {
				b.Hits.Append(x, y, toa, tot)
				b.Labels = append(b.Labels, labelOf())
			}
		}
		if got, want := Compare(&a, &b), compareByMaps(&a, &b); got != want {
			t.Fatalf("seed %d: %+v, want %+v", seed, got, want)
		}
	}
}

// TestSortNearly: in order, almost in order (the insertion sort), and
// shuffled or reversed (past its budget, the general sort), the order of
// slices.SortFunc.
func TestSortNearly(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	for _, n := range []int{0, 1, 2, 17, 1000, 50000} {
		for kind := range 4 {
			s := make([]int, n)
			for i := range s {
				switch kind {
				case 0:
					s[i] = i / 3 // in order, with repeats
				case 1:
					s[i] = i + r.IntN(40) // each behind a few before it
				case 2:
					s[i] = r.IntN(n + 1)
				case 3:
					s[i] = n - i
				}
			}
			want := slices.Sorted(slices.Values(s))
			sortNearly(s, cmp.Compare[int])
			if !slices.Equal(s, want) {
				t.Fatalf("n %d, kind %d: not sorted", n, kind)
			}
		}
	}
}
