package prefault

import (
	"slices"
	"testing"
)

// TestContentsKept: prefaulting changes nothing in memory fresh or
// written, whole or a part, at any alignment.
func TestContentsKept(t *testing.T) {
	fresh := make([]int32, 3<<20)
	Slice(fresh[5:])
	if slices.ContainsFunc(fresh, func(v int32) bool { return v != 0 }) {
		t.Fatal("fresh memory no longer zero")
	}
	for i := range fresh {
		fresh[i] = int32(i)
	}
	Slice(fresh)
	Slice(fresh[1000:1001])
	Slice(fresh[:0])
	Slice([]struct{}{{}, {}})
	for i, v := range fresh {
		if v != int32(i) {
			t.Fatalf("value %d changed to %d", i, v)
		}
	}
}
