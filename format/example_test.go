package format_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/pixel"
)

// Write clusters in the format the file name says, and read them back.
func ExampleCreateClusters() {
	c, _ := pixel.NewClusterer(pixel.DefaultConfig())
	var h pixel.Hits
	h.Append(10, 20, 100*pixel.Nanosecond, 30)
	h.Append(11, 20, 125*pixel.Nanosecond, 10)
	h.Append(100, 100, 500*pixel.Nanosecond, 5)

	dir, _ := os.MkdirTemp("", "hitflow")
	defer os.RemoveAll(dir)
	for _, name := range []string{"clusters.csv", "clusters.parquet", "clusters.root"} {
		name = filepath.Join(dir, name)
		w, err := format.CreateClusters(name, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		c.KeepMembers(w.NeedsMembers()) // ROOT files carry the hits
		if err := w.Write(c.Add(&h)); err != nil {
			fmt.Println(err)
			return
		}
		if err := w.Write(c.Flush()); err != nil {
			fmt.Println(err)
			return
		}
		if err := w.Close(); err != nil { // the file appears now
			fmt.Println(err)
			return
		}
		back, err := format.ReadClusters(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d clusters, sizes %v, %d hits kept\n", filepath.Ext(name), back.Len(), back.Size, back.Members.Len())
	}
	// Output:
	// .csv: 2 clusters, sizes [2 1], 0 hits kept
	// .parquet: 2 clusters, sizes [2 1], 0 hits kept
	// .root: 2 clusters, sizes [2 1], 3 hits kept
}
