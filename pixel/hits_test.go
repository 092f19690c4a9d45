package pixel

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Time
	}{
		{"200ns", 200 * Nanosecond}, {"1.5625ns", 100}, {"0.5us", 500 * Nanosecond}, {"500µs", 500 * Microsecond},
		{"2ms", 2 * Millisecond}, {"1s", Second}, {"0s", 0}, {"0", 0}, {"-3ns", -3 * Nanosecond},
	} {
		got, err := ParseTime(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "200", "ns", "1e300s", "NaNns", "5 min"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
}

func TestAppendNs(t *testing.T) {
	for _, tc := range []struct {
		t    Time
		want string
	}{{0, "0"}, {64, "1"}, {100, "1.5625"}, {-100, "-1.5625"}, {1, "0.015625"}, {Second, "1000000000"}} {
		if got := string(AppendNs(nil, tc.t)); got != tc.want {
			t.Errorf("AppendNs(%d) = %q, want %q", tc.t, got, tc.want)
		}
		if back := TimeFromNs(tc.t.Ns()); back != tc.t {
			t.Errorf("TimeFromNs(%v) = %d, want %d", tc.t.Ns(), back, tc.t)
		}
	}
	// The float's shortest form below 2^32 ns, where it is exact; reading
	// back as the float below 2^53 units.
	r := rand.New(rand.NewPCG(3, 3))
	for range 200000 {
		tm := Time(r.Int64N(1<<53)) >> r.IntN(53)
		if r.IntN(2) == 0 {
			tm = -tm
		}
		got := string(AppendNs(nil, tm))
		if want := strconv.FormatFloat(tm.Ns(), 'f', -1, 64); tm < 1<<38 && tm > -1<<38 && got != want {
			t.Fatalf("AppendNs(%d) = %q, want %q", tm, got, want)
		}
		if ns, err := strconv.ParseFloat(got, 64); err != nil || ns != tm.Ns() || TimeFromNs(ns) != tm {
			t.Fatalf("AppendNs(%d) = %q reads back as %v", tm, got, ns)
		}
	}
	for _, tm := range []Time{1<<63 - 1, -1 << 63, 1<<62 + 5, -(1<<62 + 7)} {
		got := string(AppendNs(nil, tm))
		ns, err := strconv.ParseFloat(got, 64)
		if err != nil || ns != tm.Ns() {
			t.Errorf("AppendNs(%d) = %q reads back as %v, want %v", tm, got, ns, tm.Ns())
		}
	}
}

// TestAppendKeepsEnergies appends runs of calibrated and uncalibrated
// hits, by range and by index, in random order: every hit keeps its
// energy, and those from uncalibrated batches get zero.
func TestAppendKeepsEnergies(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for round := range 2000 {
		var h Hits
		var wantT []Time
		var wantE []float32
		calibrated := false
		for range 1 + r.IntN(6) {
			var src Hits
			withE := r.IntN(2) == 0
			for i := range r.IntN(5) {
				v := Time(round*1000 + len(wantT)*10 + i)
				src.Append(1, 2, v, 3)
				if withE {
					src.E = append(src.E, float32(v))
				}
			}
			idx := make([]int32, 0, src.Len())
			for i := range src.Len() {
				idx = append(idx, int32(i))
			}
			r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			byIndex := r.IntN(2) == 0
			if byIndex {
				h.gather(&src, idx)
			} else {
				h.AppendRange(&src, 0, src.Len())
				slices.Sort(idx)
			}
			for _, i := range idx {
				wantT = append(wantT, src.ToA[i])
				e := float32(0)
				if src.Calibrated() {
					e, calibrated = src.E[i], true
				}
				wantE = append(wantE, e)
			}
		}
		if !slices.Equal(h.ToA, wantT) {
			t.Fatalf("round %d: times %v, want %v", round, h.ToA, wantT)
		}
		if !calibrated {
			wantE = nil
		}
		if len(h.E) != len(wantE) || (len(wantE) > 0 && !slices.Equal(h.E, wantE)) {
			t.Fatalf("round %d: energies %v, want %v", round, h.E, wantE)
		}
	}
}
