package pixel

import (
	"cmp"
	"slices"
)

// The reference clusterings below are written directly from the text of
// each definition, with no pixel matrix, no union-find and no streaming:
// quadratic, obviously correct, and independent of the code under test.

type refHit struct {
	x, y int
	t    Time
}

func neighbours(a, b refHit) bool {
	return abs(a.x-b.x) <= 1 && abs(a.y-b.y) <= 1
}

func abs[T int | Time](v T) T {
	if v < 0 {
		return -v
	}
	return v
}

// refLocal builds the full graph (an edge between spatial neighbours at
// most dt apart) and labels its connected components by breadth-first
// search. Labels are the smallest hit index of each component.
func refLocal(hits []refHit, dt Time) []int {
	label := make([]int, len(hits))
	for i := range label {
		label[i] = -1
	}
	for s := range hits {
		if label[s] >= 0 {
			continue
		}
		label[s] = s
		queue := []int{s}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for v := range hits {
				if label[v] < 0 && neighbours(hits[u], hits[v]) && abs(hits[u].t-hits[v].t) <= dt {
					label[v] = s
					queue = append(queue, v)
				}
			}
		}
	}
	return label
}

// refIncremental follows the incremental text of the global and window
// definitions: hits in time order (ties by index); a cluster is open while
// its latest (global) or first (window) hit is at most dt older than the
// hit; the hit joins, and merges, every open cluster with a hit on one of
// the nine pixels around it.
func refIncremental(hits []refHit, dt Time, def Definition) []int {
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(hits[a].t, hits[b].t) })
	type cluster struct {
		members     []int
		first, last Time
	}
	var clusters []*cluster
	for _, h := range order {
		joined := &cluster{members: []int{h}, first: hits[h].t, last: hits[h].t}
		var rest []*cluster
		for _, c := range clusters {
			open := c.last >= hits[h].t-dt
			if def == Window {
				open = c.first >= hits[h].t-dt
			}
			touches := false
			for _, m := range c.members {
				if neighbours(hits[m], hits[h]) {
					touches = true
					break
				}
			}
			if open && touches {
				joined.members = append(joined.members, c.members...)
				joined.first = min(joined.first, c.first)
				joined.last = max(joined.last, c.last)
			} else {
				rest = append(rest, c)
			}
		}
		clusters = append(rest, joined)
	}
	label := make([]int, len(hits))
	for _, c := range clusters {
		m := slices.Min(c.members)
		for _, i := range c.members {
			label[i] = m
		}
	}
	return label
}

func reference(hits []refHit, dt Time, def Definition) []int {
	if def == Local {
		return refLocal(hits, dt)
	}
	return refIncremental(hits, dt, def)
}
