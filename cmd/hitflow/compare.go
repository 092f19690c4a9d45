package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/pixel"
)

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "compare A.csv B.csv",
		Short: "Compare two clusterings of the same hits (per-hit label files)",
		Long: `Compare two per-hit label files (x,y,toa_ns,tot,cluster, as written by
"hitflow cluster --hits", .csv, .parquet or .arrow) clustering the same hits, B
being the reference.
Each cluster of A is matched with the B cluster sharing most of its hits
and scored by intersection over union; the mean score (plain and weighted
by cluster size) is 1 exactly when the clusterings are identical. Also
reported: hits found in one file only and clusters without an identical
twin in the other file.
As diff and cmp, it exits 0 when the clusterings are identical (the same
hits, the same clusters), 1 when they differ and 2 on trouble (a file
that cannot be read, no hit in common, a usage error).`,
		Example: `  hitflow cluster --mode sequential --hits seq.csv -o /dev/null run.tpx3
  hitflow cluster --mode chunked --hits chunked.parquet -o /dev/null run.tpx3
  hitflow compare chunked.parquet seq.csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare takes two label files, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			err := runCompare(cmd.Context(), args[0], args[1], stdout, stderr)
			if _, differ := errors.AsType[clusteringsDiffer](err); err != nil && !differ {
				return withExitCode{err, exitTrouble}
			}
			return err
		},
	}
}

// runCompare scores the clustering of label file nameA against the
// reference nameB.
func runCompare(ctx context.Context, nameA, nameB string, stdout, stderr io.Writer) error {
	if err := prepare(ctx, positional(nameA, nameB)); err != nil {
		return err
	}
	// The two files are read at once, one a core; a file that cannot be
	// opened fails at once, not after the other is read.
	for _, name := range []string{nameA, nameB} {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		f.Close()
	}
	a, err := untilStopped(ctx, "", func() (pixel.Agreement, error) {
		var sets [2]*pixel.Labelled
		var errs [2]error
		var wg sync.WaitGroup
		for i, name := range []string{nameA, nameB} {
			wg.Go(func() { sets[i], errs[i] = format.ReadHits(name) })
		}
		wg.Wait()
		if err := cmp.Or(errs[0], errs[1]); err != nil {
			return pixel.Agreement{}, err
		}
		return pixel.Compare(sets[0], sets[1]), nil
	})
	if err != nil {
		return err
	}
	iou := fmt.Sprintf("IoU %.6f (hit-weighted %.6f)", a.IoU, a.HitIoU)
	if a.Hits == 0 {
		iou = "IoU undefined (no hit in both files)"
	}
	if a.OnlyA > 0 || a.OnlyB > 0 {
		fmt.Fprintf(stderr, "hitflow: the files do not hold the same hits (%d in %s only, %d in %s only): the scores count the %d in both\n",
			a.OnlyA, nameA, a.OnlyB, nameB, a.Hits)
	}
	if _, err := fmt.Fprintf(stdout, "hits %d (only in A %d, only in B %d), clusters A %d, B %d, without an identical twin A %d, B %d, %s\n",
		a.Hits, a.OnlyA, a.OnlyB, a.ClustersA, a.ClustersB, a.DifferA, a.DifferB, iou); err != nil {
		return err
	}
	if a.Hits == 0 {
		return fmt.Errorf("%s and %s have no hit in common: nothing to compare", nameA, nameB)
	}
	if a.OnlyA > 0 || a.OnlyB > 0 || a.DifferA > 0 || a.DifferB > 0 {
		return clusteringsDiffer{nameA, nameB}
	}
	return nil
}

// clusteringsDiffer is compare's verdict when the files are not the same
// clustering of the same hits: exit 1, as diff's.
type clusteringsDiffer struct{ a, b string }

func (d clusteringsDiffer) Error() string { return d.a + " and " + d.b + " differ" }
