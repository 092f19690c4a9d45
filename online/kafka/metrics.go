package kafka

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// GroupProgress keeps a group member's latest counts for Prometheus: give
// its Update to GroupOptions.Progress and its Collectors to a metrics
// server. The counts are those of committed transactions, as in
// GroupStats. Its methods are safe for concurrent use.
type GroupProgress struct {
	mu   sync.Mutex
	st   GroupStats
	held int
}

// Update notes the member's counts and the partitions it holds.
func (g *GroupProgress) Update(st GroupStats, held int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.st, g.held = st, held
}

// Collectors are the member's metrics, read when scraped.
func (g *GroupProgress) Collectors() []prometheus.Collector {
	read := func(f func(*GroupStats) int64) func() float64 {
		return func() float64 {
			g.mu.Lock()
			defer g.mu.Unlock()
			return float64(f(&g.st))
		}
	}
	counter := func(name, help string, f func(*GroupStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, read(f))
	}
	return []prometheus.Collector{
		counter("hitflow_group_messages_total", "Raw messages clustered.", func(s *GroupStats) int64 { return s.Messages }),
		counter("hitflow_group_bytes_total", "Bytes of the raw messages clustered.", func(s *GroupStats) int64 { return s.Bytes }),
		counter("hitflow_group_skipped_messages_total", "Messages that were not raw .tpx3 chunks.", func(s *GroupStats) int64 { return s.Skipped }),
		counter("hitflow_group_missed_offsets_total", "Offsets without a message (expired, or transaction markers).", func(s *GroupStats) int64 { return s.Missed }),
		counter("hitflow_group_clusters_total", "Clusters published as ev44 events.", func(s *GroupStats) int64 { return s.Clusters }),
		counter("hitflow_group_event_messages_total", "ev44 messages published.", func(s *GroupStats) int64 { return s.EventMessages }),
		counter("hitflow_group_unpublished_clusters_total", "Clusters not published: off the sensor, before the first pulse, or a time of flight over 2.1 s.", func(s *GroupStats) int64 { return s.Left }),
		counter("hitflow_group_late_hits_total", "Hits later than the reorder window allowed.", func(s *GroupStats) int64 { return s.Late }),
		counter("hitflow_group_commits_total", "Transactions committed.", func(s *GroupStats) int64 { return s.Commits }),
		counter("hitflow_group_aborts_total", "Transactions the brokers aborted (a rebalance meanwhile).", func(s *GroupStats) int64 { return s.Aborts }),
		counter("hitflow_group_restored_partitions_total", "Partitions taken over from a committed state.", func(s *GroupStats) int64 { return s.Restored }),
		counter("hitflow_group_client_restarts_total", "New Kafka clients after a failed one.", func(s *GroupStats) int64 { return s.Restarts }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hitflow_group_partitions", Help: "Partitions of the raw topic the member holds."}, func() float64 {
			g.mu.Lock()
			defer g.mu.Unlock()
			return float64(g.held)
		}),
	}
}
