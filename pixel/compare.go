package pixel

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/hitflow/hitflow/internal/prefault"
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
//
// Without maps: the labels of each file are numbered densely in their
// order, each file's hits are sorted by hit and label, the pairs of
// labels of the matched hits are sorted as packed words, and each A
// cluster's runs of pairs give its best B cluster, in A's label order.
// The scores are summed in that order, so they are the same bits
// whatever the files' order.
func Compare(a, b *Labelled) Agreement {
	// Each file's labels and hits on a core of its own.
	var ea, eb []labelledHit
	var clustersA, clustersB int
	var wg sync.WaitGroup
	wg.Go(func() { ea, clustersA = a.entries() })
	eb, clustersB = b.entries()
	wg.Wait()
	ag := Agreement{ClustersA: int64(clustersA), ClustersB: int64(clustersB)}
	sizeA, sizeB := make([]int64, clustersA), make([]int64, clustersB)
	pairs := prefault.Make[uint64](0, min(len(ea), len(eb)))
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var c int
		switch {
		case i == len(ea):
			c = 1
		case j == len(eb):
			c = -1
		default:
			c = cmp.Or(cmp.Compare(ea[i].toa, eb[j].toa), cmp.Compare(ea[i].pixel, eb[j].pixel))
		}
		switch {
		case c < 0:
			ag.OnlyA++
			i++
		case c > 0:
			ag.OnlyB++
			j++
		default:
			pairs = append(pairs, uint64(ea[i].label)<<32|uint64(eb[j].label))
			sizeA[ea[i].label]++
			sizeB[eb[j].label]++
			ag.Hits++
			i++
			j++
		}
	}
	slices.Sort(pairs)
	identicalB := make([]bool, clustersB)
	var sum, weighted float64
	matched := 0 // A clusters with a hit in B
	for k := 0; k < len(pairs); matched++ {
		ca := pairs[k] >> 32
		best, bestN := uint64(0), int64(0) // the first B cluster of most shared hits: ties to the smaller label
		for k < len(pairs) && pairs[k]>>32 == ca {
			n, p := int64(0), pairs[k]
			for ; k < len(pairs) && pairs[k] == p; k++ {
				n++
			}
			if n > bestN {
				best, bestN = p&(1<<32-1), n
			}
		}
		iou := float64(bestN) / float64(sizeA[ca]+sizeB[best]-bestN)
		sum += iou
		weighted += iou * float64(sizeA[ca])
		if bestN == sizeA[ca] && bestN == sizeB[best] {
			identicalB[best] = true
		}
	}
	if matched > 0 {
		ag.IoU, ag.HitIoU = sum/float64(matched), weighted/float64(ag.Hits)
	}
	identical := int64(0)
	for _, t := range identicalB {
		if t {
			identical++
		}
	}
	ag.DifferA, ag.DifferB = ag.ClustersA-identical, ag.ClustersB-identical
	return ag
}

// labelledHit is a hit of a label file, its pixel and ToT packed in one
// word in the order hits compare (x, y, ToT), with its dense label.
type labelledHit struct {
	toa   Time
	pixel uint64
	label uint32
}

// entries returns the hits of l with their dense labels, sorted by hit,
// then label, and the number of labels.
func (l *Labelled) entries() ([]labelledHit, int) {
	dense, labels := denseLabels(l.Labels)
	h := &l.Hits
	e := prefault.Make[labelledHit](h.Len(), h.Len())
	for i := range e {
		e[i] = labelledHit{h.ToA[i], uint64(h.X[i])<<32 | uint64(h.Y[i])<<16 | uint64(h.ToT[i]), dense[i]}
	}
	sortNearly(e, func(a, b labelledHit) int {
		return cmp.Or(cmp.Compare(a.toa, b.toa), cmp.Compare(a.pixel, b.pixel), cmp.Compare(a.label, b.label))
	})
	return e, labels
}

// sortNearly sorts s by cmp. A label file's hits come by cluster, each
// cluster's in time order and the clusters by their first hit, and its
// labels in the clusters' order: almost in order, each element behind a
// few of those before it. So an insertion sort, while it moves no more
// than a few elements for each (else a general sort, from where it
// stands).
func sortNearly[T any](s []T, cmp func(a, b T) int) {
	budget := 16 * len(s)
	for i := 1; i < len(s); i++ {
		x, j := s[i], i
		for ; j > 0 && cmp(x, s[j-1]) < 0; j-- {
			s[j] = s[j-1]
		}
		s[j] = x
		if budget -= i - j; budget < 0 {
			slices.SortFunc(s, cmp)
			return
		}
	}
}

// denseLabels numbers the distinct labels 0, 1, ... in their order and
// returns each hit's number and how many there are.
func denseLabels(labels []int64) ([]uint32, int) {
	type labelAt struct {
		label int64
		at    int
	}
	s := prefault.Make[labelAt](len(labels), len(labels))
	for i, l := range labels {
		s[i] = labelAt{l, i}
	}
	sortNearly(s, func(a, b labelAt) int { return cmp.Compare(a.label, b.label) })
	dense := prefault.Make[uint32](len(labels), len(labels))
	n := 0
	for k, e := range s {
		if k > 0 && e.label != s[k-1].label {
			n++
		}
		dense[e.at] = uint32(n)
	}
	if len(s) > 0 {
		n++
	}
	return dense, n
}
