package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// BenchmarkGroup clusters four detectors' raw data (4 x 10^6 pion
// hits, already on the in-process broker) by a group of 1, 2 and 3
// members in this process, in transactions, and, for the overhead of
// exactly-once, by plain runs publishing each partition (Reader,
// pipeline, Publisher). Mhit/s counts the time until the last member
// ends, its Idle wait left out, and the joining of the group in.
func BenchmarkGroup(b *testing.B) {
	t := &testing.T{}
	raws := groupData(t, 4, 1000000)
	proc := groupProcessing(t)
	hits := 4 * 1e6
	const idle = 300 * time.Millisecond
	setup := func(b *testing.B) []string {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "raw"), kfake.SeedTopics(4, "events"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		cl, _ := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		defer cl.Close()
		for p, raw := range raws {
			for _, m := range fixture.Rechunk(raw, 1000) {
				if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "raw", Partition: int32(p), Value: m}).FirstErr(); err != nil {
					b.Fatal(err)
				}
			}
		}
		return c.ListenAddrs()
	}
	for _, members := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			var busy time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				addrs := setup(b)
				b.StartTimer()
				opt := GroupOptions{In: Target{addrs, "raw"}, Out: Target{addrs, "events"}, Group: fmt.Sprint("g", i),
					Compression: "lz4", Processing: proc, Idle: idle}
				t0 := time.Now()
				var wg sync.WaitGroup
				for range members {
					wg.Go(func() {
						if _, err := RunGroup(context.Background(), opt); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				busy += time.Since(t0) - idle
			}
			b.ReportMetric(hits*float64(b.N)/busy.Seconds()/1e6, "Mhit/s")
		})
	}
	b.Run("plain", func(b *testing.B) {
		var busy time.Duration
		for b.Loop() {
			b.StopTimer()
			addrs := setup(b)
			b.StartTimer()
			t0 := time.Now()
			for p := range raws {
				r, err := NewReader(context.Background(), ReadOptions{Target: Target{addrs, "raw"}, Partition: int32(p), Idle: idle})
				if err != nil {
					b.Fatal(err)
				}
				opt := proc.Events
				opt.Source = proc.source(int32(p), len(raws))
				pub, err := NewPublisher(context.Background(), Options{Target: Target{addrs, "events"}, Compression: "lz4", Events: opt})
				if err != nil {
					b.Fatal(err)
				}
				_, err = pipeline.Run(context.Background(), pipeline.Job{Sources: []pipeline.Source{{Name: r.Name(), R: r}},
					Reader: tpx3.Options{Layout: proc.Layout, Width: 256, Height: 256}, Unsorted: proc.Unsorted, Cluster: proc.Cluster, Clusters: pub})
				if err == nil {
					err = pub.Close()
				}
				r.Close()
				if err != nil {
					b.Fatal(err)
				}
				busy -= idle
			}
			busy += time.Since(t0)
		}
		b.ReportMetric(hits*float64(b.N)/busy.Seconds()/1e6, "Mhit/s")
	})
}
