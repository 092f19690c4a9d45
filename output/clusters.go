package output

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/internal/textfmt"
	"github.com/hitflow/hitflow/internal/textparts"
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
// stdout, and os.DevNull nothing (the clusters are not even formatted).
// Close flushes and closes the file.
func CreateClusters(name string, stdout io.Writer) (ClusterWriter, error) {
	if name == os.DevNull {
		return discard{}, nil
	}
	ext := strings.ToLower(filepath.Ext(name))
	if name == "-" {
		ext = ".csv"
	}
	switch ext {
	case ".root":
		return CreateClusterROOT(name)
	case ".csv", ".clog", ".parquet", ".arrow":
	default:
		return nil, fmt.Errorf("%s: %w %q (want .csv, .clog, .parquet, .arrow or .root)", name, ErrUnknownFormat, ext)
	}
	w, err := outfile.CreateWriter(name, stdout)
	if err != nil {
		return nil, err
	}
	var cw ClusterWriter
	switch ext {
	case ".csv":
		cw, err = NewClusterCSV(w)
	case ".clog":
		cw = NewCLog(w)
	case ".arrow":
		cw, err = NewClusterArrow(w)
	default:
		cw, err = NewClusterParquet(w)
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	return fileClusterWriter{cw, w}, nil
}

// fileClusterWriter closes the file after the writer.
type fileClusterWriter struct {
	ClusterWriter
	f outfile.Writer
}

func (f fileClusterWriter) Close() error { return closeWith(f.ClusterWriter.Close, f.f) }

func (f fileClusterWriter) Abort() { f.f.Abort() }

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
	ext := strings.ToLower(filepath.Ext(name))
	if name == "-" {
		ext = ".csv"
	}
	if ext != ".csv" && ext != ".parquet" && ext != ".arrow" {
		return nil, fmt.Errorf("%s: %w %q (want .csv, .parquet or .arrow)", name, ErrUnknownFormat, ext)
	}
	w, err := outfile.CreateWriter(name, stdout)
	if err != nil {
		return nil, err
	}
	var hw HitWriter
	switch ext {
	case ".csv":
		hw = tpx3.NewCSVWriter(w, true)
	case ".arrow":
		hw, err = NewHitArrow(w)
	default:
		hw, err = NewHitParquet(w)
	}
	if err != nil {
		w.Abort()
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

// ClusterCSV writes one row per cluster.
type ClusterCSV struct {
	w    *bufio.Writer
	text textparts.Parts
}

// CSVDecimals is the precision of the cluster CSV's energy_kev, x, y and
// max: 10^-4 pixel (5.5 nm on a 55 um pitch) and 0.1 eV are far below
// what a detector resolves, and a fixed number of decimals formats much
// faster than the shortest decimal that reads back exactly (the binary
// formats keep every bit). Trailing zeros are left out.
const CSVDecimals = 4

// ClusterCSVHeader is the header line of the cluster CSV.
const ClusterCSVHeader = "id,size,toa_ns,span_ns,tot_sum,energy_kev,x,y,xmin,xmax,ymin,ymax,max"

// NewClusterCSV writes the header and returns the writer.
func NewClusterCSV(w io.Writer) (*ClusterCSV, error) {
	c := &ClusterCSV{w: bufio.NewWriterSize(w, textparts.BufferSize)}
	_, err := c.w.WriteString(ClusterCSVHeader + "\n")
	return c, err
}

func (c *ClusterCSV) NeedsMembers() bool { return false }

func (c *ClusterCSV) Write(cl *pixel.Clusters) error {
	return c.text.Write(c.w, cl.Len(), func(dst []byte, lo, hi int) []byte { return appendClusterRows(dst, cl, lo, hi) })
}

// maxClusterRow bounds the bytes of a row of the cluster CSV.
const maxClusterRow = 2*pixel.MaxNsLen + 11*textfmt.MaxLen + 13

// appendClusterRows appends the CSV rows of clusters [lo, hi) of cl. The
// room for a row is reserved once, and its fields written in place.
func appendClusterRows(l []byte, cl *pixel.Clusters, lo, hi int) []byte {
	for i := lo; i < hi; i++ {
		l = slices.Grow(l, maxClusterRow)
		b := l[len(l) : len(l)+maxClusterRow]
		n := textfmt.PutInt(b, cl.ID[i])
		b[n] = ','
		n++
		n += textfmt.PutUint(b[n:], uint64(cl.Size[i]))
		b[n] = ','
		n++
		n += pixel.PutNs(b[n:], cl.FirstToA[i])
		b[n] = ','
		n++
		n += pixel.PutNs(b[n:], cl.LastToA[i]-cl.FirstToA[i])
		b[n] = ','
		n++
		n += textfmt.PutInt(b[n:], cl.ToTSum[i])
		b[n] = ','
		n++
		if cl.Calibrated {
			n += textfmt.PutFixed(b[n:], cl.ESum[i], CSVDecimals)
		}
		b[n] = ','
		n++
		n += textfmt.PutFixed(b[n:], cl.X[i], CSVDecimals)
		b[n] = ','
		n++
		n += textfmt.PutFixed(b[n:], cl.Y[i], CSVDecimals)
		for _, v := range [...]uint16{cl.XMin[i], cl.XMax[i], cl.YMin[i], cl.YMax[i]} {
			b[n] = ','
			n++
			n += textfmt.PutUint(b[n:], uint64(v))
		}
		b[n] = ','
		n++
		n += textfmt.PutFixed(b[n:], cl.Max[i], CSVDecimals)
		b[n] = '\n'
		l = l[:len(l)+n+1]
	}
	return l
}

func (c *ClusterCSV) Close() error { return c.w.Flush() }

// CLog writes the ADVACAM cluster log.
type CLog struct {
	w     *bufio.Writer
	frame int64 // frames written
	text  textparts.Parts
}

// NewCLog returns a .clog writer.
func NewCLog(w io.Writer) *CLog { return &CLog{w: bufio.NewWriterSize(w, textparts.BufferSize)} }

func (c *CLog) NeedsMembers() bool { return true }

func (c *CLog) Write(cl *pixel.Clusters) error {
	if !cl.HasMembers() {
		return fmt.Errorf("clog: %w", pixel.ErrNoMembers)
	}
	first := c.frame + 1
	c.frame += int64(cl.Len())
	return c.text.Write(c.w, cl.Len(), func(dst []byte, lo, hi int) []byte { return appendFrames(dst, cl, first, lo, hi) })
}

// appendFrames appends the frames of clusters [lo, hi) of cl, cluster 0
// being frame number first.
func appendFrames(l []byte, cl *pixel.Clusters, first int64, lo, hi int) []byte {
	m := &cl.Members
	for i := lo; i < hi; i++ {
		l = append(l, "Frame "...)
		l = textfmt.AppendInt(l, first+int64(i))
		l = append(l, " ("...)
		l = strconv.AppendFloat(l, float64(cl.FirstToA[i])/float64(pixel.Second), 'f', 6, 64)
		l = append(l, ", 0.000000 s)\n"...)
		for j := cl.Start[i]; j < cl.Start[i+1]; j++ {
			l = append(l, '[')
			l = textfmt.AppendUint(l, uint64(m.X[j]))
			l = append(l, ", "...)
			l = textfmt.AppendUint(l, uint64(m.Y[j]))
			l = append(l, ", "...)
			if cl.Calibrated {
				l = strconv.AppendFloat(l, float64(m.E[j]), 'g', -1, 32)
			} else {
				l = textfmt.AppendUint(l, uint64(m.ToT[j]))
			}
			l = append(l, ", "...)
			l = pixel.AppendNs(l, m.ToA[j])
			l = append(l, "] "...)
		}
		l = append(l, "\n\n"...)
	}
	return l
}

func (c *CLog) Close() error { return c.w.Flush() }
