package online_test

import (
	"context"
	"fmt"
	"net"

	"github.com/hitflow/hitflow/online"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/pipeline"
	"github.com/hitflow/hitflow/pixel/pixelsim"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// count is a clusters sink that counts them.
type count struct{ clusters int }

func (c *count) Write(cl *pixel.Clusters) error { c.clusters += cl.Len(); return nil }
func (c *count) NeedsMembers() bool             { return false }

// A simulated readout serves a run over TCP; the stream received is
// clustered live, as a file would be.
func Example() {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go online.Serve(ctx, l, pixelsim.Options{Hits: 100_000, Seed: 1}, online.ServeOptions{})

	s, err := online.Dial(ctx, l.Addr().String(), online.Options{Memory: 64 << 20})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	layout, _ := tpx3.LayoutByName("single")
	var sink count
	sum, err := pipeline.Run(ctx, pipeline.Job{
		Sources:  []pipeline.Source{{Name: s.Name(), R: s, Arrived: s.ArrivedAt}},
		Reader:   tpx3.Options{Format: tpx3.TPX3, Layout: layout},
		Cluster:  pixel.DefaultConfig(),
		Clusters: &sink,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(sum.Hits, "hits,", sink.clusters, "clusters; received", online.Bytes(s.Stats().Received))
	// Output: 100000 hits, 40833 clusters; received 781.4 KiB
}
