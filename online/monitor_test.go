package online

import (
	"strings"
	"testing"
	"time"
)

func TestLatencyQuantiles(t *testing.T) {
	var l Latency
	if q := l.Quantile(0.5); q != 0 || l.N != 0 {
		t.Fatalf("empty: %v", q)
	}
	// 90 clusters at 1 ms, 9 at 10 ms, 1 at 100 ms.
	l.Add(time.Millisecond, 90)
	l.Add(10*time.Millisecond, 9)
	l.Add(100*time.Millisecond, 1)
	l.Add(time.Second, 0) // no clusters: not counted
	check := func(q float64, want time.Duration) {
		t.Helper()
		got := l.Quantile(q)
		// The bucket's upper edge: at most 9 % above.
		if got < want || float64(got) > 1.0906*float64(want) {
			t.Errorf("q%v = %v, want %v to 9 %% above", q, got, want)
		}
	}
	check(0.5, time.Millisecond)
	check(0.9, time.Millisecond)
	check(0.95, 10*time.Millisecond)
	check(0.99, 10*time.Millisecond)
	if got := l.Quantile(1); got != 100*time.Millisecond {
		t.Errorf("q1 = %v, want the maximum, 100ms", got)
	}
	if l.N != 100 || l.Max != 100*time.Millisecond {
		t.Errorf("N %d, max %v", l.N, l.Max)
	}
	if s := l.String(); !strings.HasPrefix(s, "p50 1.0") || !strings.HasSuffix(s, "max 100ms") {
		t.Errorf("String: %s", s)
	}
	// Out of the buckets' range: the extremes.
	var e Latency
	e.Add(0, 1)
	e.Add(100*time.Hour, 1)
	if e.Quantile(0.5) > time.Microsecond || e.Quantile(1) != 100*time.Hour {
		t.Errorf("extremes: %v %v", e.Quantile(0.5), e.Quantile(1))
	}
}

func TestParseRotation(t *testing.T) {
	for s, want := range map[string]Rotation{
		"10m":     {Every: 10 * time.Minute},
		"1h30m":   {Every: 90 * time.Minute},
		"1GiB":    {Size: 1 << 30},
		"500MB":   {Size: 500e6},
		"1.5 KiB": {Size: 1536},
		"4096":    {Size: 4096},
	} {
		if got, err := ParseRotation(s); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "soon", "-1m", "0", "0s", "5 parsecs", "1e30GiB"} {
		if got, err := ParseRotation(s); err == nil {
			t.Errorf("%q: %+v, want an error", s, got)
		}
	}
}

func TestPartName(t *testing.T) {
	for name, want := range map[string]string{
		"clusters.parquet":  "clusters-0007.parquet",
		"dir/run.tar.arrow": "dir/run.tar-0007.arrow",
		"noext":             "noext-0007",
	} {
		if got := PartName(name, 7); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for b, want := range map[Bytes]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 29: "1.5 GiB"} {
		if got := b.String(); got != want {
			t.Errorf("%d: %s, want %s", int64(b), got, want)
		}
	}
}
