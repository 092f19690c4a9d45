package pixel

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Agreement measures how far two clusterings of the same hits agree.
//
// Hits are matched by (x, y, ToA, ToT); equal hits pair up in label order.
// Each cluster of A is matched with the cluster of B with which it shares
// most hits (ties to the smaller label), and scores their intersection
// over union, |a ∩ b| / |a ∪ b|, counting only hits present in both
// files. IoU is the mean score over A's clusters, HitIoU the mean weighted
// by cluster size; both are 1 exactly when every cluster has an identical
// twin. DifferA and DifferB count the clusters without one.
type Agreement struct {
	Hits                 int64 // hits in both files
	OnlyA, OnlyB         int64 // hits in one file only
	ClustersA, ClustersB int64
	DifferA, DifferB     int64 // clusters with no identical cluster in the other file
	IoU, HitIoU          float64
}

// Labelled is a set of hits with their cluster labels.
type Labelled struct {
	Hits   Hits
	Labels []int64
}

// Attach gives the clusters of c the hits that l labels with their ids,
// as Members in time order. Every cluster must get as many hits as its
// size: files of two runs are not mixed.
func (l *Labelled) Attach(c *Clusters) error {
	at := make(map[int64]int, c.Len())
	for i, id := range c.ID {
		at[id] = i
	}
	// Counting sort by cluster, stable: each cluster's hits keep the order
	// of the file, sorted by time below if they came otherwise.
	start := make([]int, c.Len()+1)
	for _, id := range l.Labels {
		if i, ok := at[id]; ok {
			start[i+1]++
		}
	}
	for i := range c.Len() {
		if int(c.Size[i]) != start[i+1] {
			return fmt.Errorf("cluster %d has %d hits, the labels give it %d", c.ID[i], c.Size[i], start[i+1])
		}
		start[i+1] += start[i]
	}
	order := make([]int, start[c.Len()])
	next := slices.Clone(start[:c.Len()])
	for k, id := range l.Labels {
		if i, ok := at[id]; ok {
			order[next[i]] = k
			next[i]++
		}
	}
	for i := range c.Len() {
		slices.SortStableFunc(order[start[i]:start[i+1]], func(a, b int) int { return cmp.Compare(l.Hits.ToA[a], l.Hits.ToA[b]) })
	}
	c.Members.Reset()
	for _, k := range order {
		c.Members.AppendFrom(&l.Hits, k)
	}
	c.Start = start
	return nil
}

// Compare returns the agreement of clustering a with reference b.
func Compare(a, b *Labelled) Agreement {
	ia, ib := a.order(), b.order()
	var ag Agreement
	type pair struct{ a, b int64 }
	inter := map[pair]int64{}
	sizeA, sizeB := map[int64]int64{}, map[int64]int64{}
	i, j := 0, 0
	for i < len(ia) || j < len(ib) {
		var c int
		switch {
		case i == len(ia):
			c = 1
		case j == len(ib):
			c = -1
		default:
			c = compareHits(&a.Hits, ia[i], &b.Hits, ib[j])
		}
		switch {
		case c < 0:
			ag.OnlyA++
			i++
		case c > 0:
			ag.OnlyB++
			j++
		default:
			la, lb := a.Labels[ia[i]], b.Labels[ib[j]]
			inter[pair{la, lb}]++
			sizeA[la]++
			sizeB[lb]++
			ag.Hits++
			i++
			j++
		}
	}
	ag.ClustersA, ag.ClustersB = countLabels(a.Labels), countLabels(b.Labels)
	best := map[int64]pair{} // per A cluster: B label and shared hits
	for p, n := range inter {
		if bp, ok := best[p.a]; !ok || n > bp.b || n == bp.b && p.b < bp.a {
			best[p.a] = pair{p.b, n}
		}
	}
	identicalB := map[int64]bool{}
	var sum, weighted float64
	for _, la := range slices.Sorted(maps.Keys(best)) { // a fixed order of summation
		bp := best[la]
		n := bp.b
		iou := float64(n) / float64(sizeA[la]+sizeB[bp.a]-n)
		sum += iou
		weighted += iou * float64(sizeA[la])
		if n == sizeA[la] && n == sizeB[bp.a] {
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

// order returns the hit indices sorted by hit, then label.
func (l *Labelled) order() []int {
	idx := make([]int, l.Hits.Len())
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		return cmp.Or(compareHits(&l.Hits, i, &l.Hits, j), cmp.Compare(l.Labels[i], l.Labels[j]))
	})
	return idx
}

func compareHits(a *Hits, i int, b *Hits, j int) int {
	return cmp.Or(cmp.Compare(a.ToA[i], b.ToA[j]), cmp.Compare(a.X[i], b.X[j]), cmp.Compare(a.Y[i], b.Y[j]), cmp.Compare(a.ToT[i], b.ToT[j]))
}

func countLabels(labels []int64) int64 {
	seen := map[int64]struct{}{}
	for _, l := range labels {
		seen[l] = struct{}{}
	}
	return int64(len(seen))
}
