package format

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/format/root"
	"github.com/hitflow/hitflow/format/text"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// ClusterWriter writes batches of pixel clusters.
type ClusterWriter interface {
	Write(c *pixel.Clusters) error
	// NeedsMembers reports whether the writer uses the clusters' hits.
	NeedsMembers() bool
	Close() error // flushes; does not close the underlying writer
}

// ErrUnknownFormat is returned for a file extension without a writer.
var ErrUnknownFormat = errors.New("unknown format")

// CreateClusters creates the clusters file name in the format its
// extension says: .csv, .clog, .parquet, .arrow or .root; "-" writes CSV to
// stdout, "-.clog" and "-.arrow" (an Arrow IPC stream) the others that a
// reader can take as they come, and os.DevNull nothing (the clusters are
// not even formatted). Close flushes and closes the file; Flush sends
// what a stream or text holds.
func CreateClusters(name string, stdout io.Writer) (ClusterWriter, error) {
	return CreateClustersWith(name, stdout, Columns{})
}

// Columns choose the optional columns of a clusters file (.csv,
// .parquet, .arrow and .root; not .clog), which the batches then carry.
type Columns struct {
	// Shapes adds the morphology of each cluster and its class (see
	// pixel/analysis).
	Shapes bool
	// TOF adds the time of flight (see pixel/analysis); with a positive
	// FlightPath in metres, the neutron energy and wavelength too.
	TOF        bool
	FlightPath float64
}

// CreateClustersWith is CreateClusters with optional columns.
func CreateClustersWith(name string, stdout io.Writer, cols Columns) (ClusterWriter, error) {
	if name == os.DevNull {
		return discard{}, nil
	}
	var open func(io.Writer) (ClusterWriter, error)
	opt := columnar.Options{Stream: outfile.IsStdout(name), Shapes: cols.Shapes, TOF: cols.TOF, FlightPath: cols.FlightPath}
	switch ext := extension(name); {
	case (cols.Shapes || cols.TOF) && ext == ".clog":
		return nil, fmt.Errorf("%s: %w: the morphology and time-of-flight columns go to .csv, .parquet, .arrow or .root", name, ErrUnknownFormat)
	case ext == ".csv":
		tc := text.Columns{Shapes: cols.Shapes, TOF: cols.TOF, FlightPath: cols.FlightPath}
		open = func(w io.Writer) (ClusterWriter, error) { return text.NewClusterCSV(w, tc) }
	case ext == ".clog":
		open = func(w io.Writer) (ClusterWriter, error) { return text.NewCLog(w), nil }
	case ext == ".parquet":
		open = func(w io.Writer) (ClusterWriter, error) { return columnar.NewClusterParquet(w, opt) }
	case ext == ".arrow":
		open = func(w io.Writer) (ClusterWriter, error) { return columnar.NewClusterArrow(w, opt) }
	case ext == ".root":
		if outfile.IsStdout(name) {
			return nil, notStreamed(name)
		}
		return root.CreateClusters(name, root.Columns{Shapes: cols.Shapes, TOF: cols.TOF, FlightPath: cols.FlightPath})
	default:
		return nil, fmt.Errorf("%s: %w %q (want .csv, .clog, .parquet, .arrow or .root)", name, ErrUnknownFormat, extension(name))
	}
	cw, w, err := create(name, stdout, open)
	if err != nil {
		return nil, err
	}
	return fileClusterWriter{cw, w}, nil
}

// create creates the output name (stdout for "-") and starts the writer
// that open makes on it; if that fails, nothing is left behind.
func create[W any](name string, stdout io.Writer, open func(io.Writer) (W, error)) (W, outfile.Writer, error) {
	var none W
	if outfile.IsStdout(name) && extension(name) == ".parquet" {
		return none, nil, notStreamed(name)
	}
	w, err := outfile.CreateWriter(name, stdout)
	if err != nil {
		return none, nil, err
	}
	ww, err := open(w)
	if err != nil {
		w.Abort()
		return none, nil, err
	}
	return ww, w, nil
}

// notStreamed refuses a format to standard output that a reader can
// only open once it is complete.
func notStreamed(name string) error {
	return fmt.Errorf("%s: %w: %s is readable only once complete, so it goes to a file; on standard output, write -.csv, -.clog or -.arrow (an Arrow IPC stream)", name, ErrUnknownFormat, extension(name))
}

// extension is the lower-case extension of name that says its format;
// standard output ("-") takes CSV.
func extension(name string) string {
	if name == outfile.Stdout {
		return ".csv"
	}
	return strings.ToLower(filepath.Ext(name))
}

// fileClusterWriter closes the file after the writer.
type fileClusterWriter struct {
	ClusterWriter
	f outfile.Writer
}

func (f fileClusterWriter) Close() error { return closeWith(f.ClusterWriter.Close, f.f) }

func (f fileClusterWriter) Abort() { f.f.Abort() }

func (f fileClusterWriter) Flush() error { return flushWriter(f.ClusterWriter) }

// Size is the number of bytes in the file so far (0 on standard output).
func (f fileClusterWriter) Size() int64 { return sizeOf(f.f) }

// sizeOf is the size of an output so far, if it is a file.
func sizeOf(w any) int64 {
	if s, ok := w.(interface{ Size() int64 }); ok {
		return s.Size()
	}
	return 0
}

// flushWriter flushes w if it can be (text and streams).
func flushWriter(w any) error {
	if fl, ok := w.(interface{ Flush() error }); ok {
		return fl.Flush()
	}
	return nil
}

// closeWith closes the writer of f, then puts f in place; if the writer
// fails, f is discarded.
func closeWith(closeWriter func() error, f outfile.Writer) error {
	if err := closeWriter(); err != nil {
		f.Abort()
		return err
	}
	return f.Close()
}

// HitWriter writes the hits of clusters with their cluster ids.
type HitWriter interface {
	WriteMembers(c *pixel.Clusters) error
	Close() error
}

// CreateHits creates a per-hit label file: .csv (x,y,toa_ns,tot,cluster,
// with energy_kev before cluster for calibrated hits), .parquet or .arrow
// (with energy_kev, null without calibration); "-" writes CSV to stdout,
// and os.DevNull nothing. Close flushes and closes the file.
func CreateHits(name string, stdout io.Writer) (HitWriter, error) {
	if name == os.DevNull {
		return discard{}, nil
	}
	var open func(io.Writer) (HitWriter, error)
	switch ext := extension(name); ext {
	case ".csv":
		open = func(w io.Writer) (HitWriter, error) { return tpx3.NewCSVWriter(w, true), nil }
	case ".parquet":
		open = func(w io.Writer) (HitWriter, error) { return columnar.NewHitParquet(w) }
	case ".arrow":
		opt := columnar.Options{Stream: outfile.IsStdout(name)}
		open = func(w io.Writer) (HitWriter, error) { return columnar.NewHitArrow(w, opt) }
	default:
		return nil, fmt.Errorf("%s: %w %q (want .csv, .parquet or .arrow)", name, ErrUnknownFormat, ext)
	}
	hw, w, err := create(name, stdout, open)
	if err != nil {
		return nil, err
	}
	return fileHitWriter{hw, w}, nil
}

// discard is the writer of os.DevNull: a run timed or checked without
// output pays nothing for it.
type discard struct{}

func (discard) Write(*pixel.Clusters) error        { return nil }
func (discard) WriteMembers(*pixel.Clusters) error { return nil }
func (discard) NeedsMembers() bool                 { return false }
func (discard) Close() error                       { return nil }

type fileHitWriter struct {
	HitWriter
	f outfile.Writer
}

func (f fileHitWriter) Close() error { return closeWith(f.HitWriter.Close, f.f) }

func (f fileHitWriter) Abort() { f.f.Abort() }

func (f fileHitWriter) Flush() error { return flushWriter(f.HitWriter) }

func (f fileHitWriter) Size() int64 { return sizeOf(f.f) }
