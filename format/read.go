package format

import (
	"fmt"
	"os"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/format/root"
	"github.com/hitflow/hitflow/format/text"
	"github.com/hitflow/hitflow/internal/damage"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// ReadClusters reads a clusters file written by hitflow (.csv, .parquet,
// .arrow or .root) whole. The ROOT format carries the hits of each
// cluster, which come back as Members.
func ReadClusters(name string) (*pixel.Clusters, error) {
	switch ext := extension(name); ext {
	case ".csv":
		return text.ReadClusters(name)
	case ".parquet", ".arrow":
		return columnar.ReadClusters(name)
	case ".root":
		return root.ReadClusters(name)
	default:
		return nil, fmt.Errorf("%s: %w %q for clusters (want %s)", name, ErrUnknownFormat, ext, tablesRead)
	}
}

// HoldsHits says whether a clusters file's format carries the hits of
// its clusters (ROOT's does), which ReadClusters then gives as Members.
func HoldsHits(name string) bool { return extension(name) == ".root" }

// ScanClusters reads a clusters file as ReadClusters does, in batches:
// fn gets each, valid during the call; an error of fn ends the reading
// and is returned. CSV, Parquet and Arrow are read as they go (a Parquet
// row group, an Arrow record batch, or the rows of 4 MiB of CSV, at a
// time); ROOT whole, in one batch.
func ScanClusters(name string, fn func(*pixel.Clusters) error) error {
	switch ext := extension(name); ext {
	case ".csv":
		return text.ScanClusters(name, fn)
	case ".parquet", ".arrow":
		return columnar.ScanClusters(name, fn)
	}
	c, err := ReadClusters(name)
	if err != nil {
		return err
	}
	return fn(c)
}

// ReadHits reads a per-hit label file (.csv or .parquet) written by
// [CreateHits].
func ReadHits(name string) (l *pixel.Labelled, err error) {
	switch ext := extension(name); ext {
	case ".csv":
		defer damage.Recover(name, &err)
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return tpx3.ReadLabelled(f, name)
	case ".parquet", ".arrow":
		return columnar.ReadHits(name)
	default:
		return nil, fmt.Errorf("%s: %w %q for hits (want %s)", name, ErrUnknownFormat, ext, hitsRead)
	}
}

// ReadCLUE reads a file written by [WriteCLUE].
func ReadCLUE(name string) (*cluecsv.Table, *clue.Result, error) {
	switch ext := extension(name); ext {
	case ".csv":
		return text.ReadCLUE(name)
	case ".parquet", ".arrow":
		return columnar.ReadCLUE(name)
	case ".root":
		return root.ReadCLUE(name)
	default:
		return nil, nil, fmt.Errorf("%s: %w %q (want %s)", name, ErrUnknownFormat, ext, tablesRead)
	}
}

// Kind says what a result file holds: "clusters", "hits" (a label file
// of [CreateHits]), "clue" or "pet" (an NRRD image), from its extension
// and its columns, header or trees.
func Kind(name string) (string, error) {
	switch ext := extension(name); ext {
	case ".nrrd":
		return "pet", nil
	case ".csv":
		return text.Kind(name)
	case ".parquet", ".arrow":
		return columnar.Kind(name)
	case ".root":
		return root.Kind(name)
	case ".clog":
		return "", fmt.Errorf("%s: .clog files are written, not read; plot the .csv, .parquet, .arrow or .root", name)
	default:
		return "", fmt.Errorf("%s: %w %q", name, ErrUnknownFormat, ext)
	}
}

// The formats read back: of clusters and CLUE results, and of hits.
const (
	tablesRead = ".csv, .parquet, .arrow or .root"
	hitsRead   = ".csv, .parquet or .arrow"
)
