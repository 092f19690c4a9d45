package kafka

import (
	"reflect"
	"testing"
	"time"

	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// fullState has every field set, energies on the open hits.
func fullState() *state {
	s := &state{part: 3, next: 1234, start: time.Date(2026, 11, 27, 8, 0, 0, 5, time.UTC),
		counts: taskCounts{Messages: 1, Skipped: 2, Bytes: 3, Masked: 4, Missed: 5}, settings: "dt 200",
		nextMessage: 77, clock: tpx3.ClockState{Ref: 1 << 40, Begun: true}, left: [3]int64{6, 7, 8},
		released: 9 * pixel.Microsecond, maxSeen: 10 * pixel.Microsecond,
		tof: analysis.TOFState{Refs: []pixel.Time{1, 2, 3}, Passed: 11, Missing: 12, Without: 13}}
	s.pending.Append(1, 2, 3, 4)
	s.pending.Append(5, 6, 7, 8)
	c := &s.clusterer
	c.Now, c.NextID = 14, 15
	c.Stats = pixel.Stats{Hits: 16, Clustered: 17, OutOfRange: 18, Late: 19, Restarts: 20, Clusters: 21}
	c.Open.Append(9, 10, 11, 12)
	c.Open.E = []float32{13.5}
	return s
}

// TestStateRoundTrip: a state record reads back to the state, field by
// field; a record cut short anywhere or with bytes after it is refused.
func TestStateRoundTrip(t *testing.T) {
	want := fullState()
	b := want.append(nil)
	got, err := readState(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
	for n := range len(b) {
		if _, err := readState(b[:n]); err == nil {
			t.Fatalf("a record cut at byte %d of %d read", n, len(b))
		}
	}
	if _, err := readState(append(b, 0)); err == nil {
		t.Fatal("a record with a byte after it read")
	}
}

// FuzzReadState: any bytes give a state or an error, never a panic or a
// huge allocation, and a state read writes back to the same bytes.
func FuzzReadState(f *testing.F) {
	f.Add(fullState().append(nil))
	f.Add((&state{}).append(nil))
	f.Add([]byte(stateMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := readState(b)
		if err != nil {
			return
		}
		if again := s.append(nil); string(again) != string(b) {
			t.Fatalf("%d bytes read back as %d", len(b), len(again))
		}
	})
}
