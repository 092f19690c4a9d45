package output

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/tpx3"
)

// ReadClusters reads a clusters file written by hitflow (.csv, .parquet or
// .root) whole. The ROOT format carries the hits of each cluster, which
// come back as Members. Arrow files are refused (see arrowNotRead).
func ReadClusters(name string) (c *pixel.Clusters, err error) {
	defer recoverDamage(name, &err)
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".csv":
		return readClusterCSV(name)
	case ".arrow":
		return nil, arrowNotRead(name, tablesRead)
	case ".parquet":
		tbl, err := readParquet(name, ClusterParquetFields)
		if err != nil {
			return nil, err
		}
		defer tbl.Release()
		return clustersFromTable(tbl), nil
	case ".root":
		rep, err := readROOT("clusters", name)
		if err != nil {
			return nil, err
		}
		return rep.Clusters, nil
	default:
		return nil, fmt.Errorf("%s: cannot read clusters from %q files (want .csv, .parquet or .root)", name, ext)
	}
}

// recoverDamage turns a panic of a file library on a damaged file into an
// error naming the file: groot, for one, panics on a corrupt payload.
func recoverDamage(name string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: damaged file: %v", name, r)
	}
}

// arrowNotRead is the error for reading an Arrow IPC file: hitflow writes
// them for other tools but does not read them back, because arrow-go's IPC
// reader trusts the counts in the file, and fuzzing found a damaged field
// count that made it allocate 300 GB, a crash no recover can catch.
// The error names the formats that are read in its place (want).
func arrowNotRead(name, want string) error {
	return fmt.Errorf("%s: Arrow files are written for pyarrow, polars or pandas, not read back by hitflow; use %s", name, want)
}

// The formats read back: of clusters and CLUE results, and of hits.
const (
	tablesRead = ".parquet, .csv or .root"
	hitsRead   = ".parquet or .csv"
)

// readParquet reads a Parquet file into an Arrow table and checks that it
// has the columns of fields.
func readParquet(name string, fields []arrow.Field) (arrow.Table, error) {
	rdr, fr, err := openParquet(name)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkColumns(name, tbl, fields); err != nil {
		tbl.Release()
		return nil, err
	}
	return tbl, nil
}

// openParquet opens a Parquet file for reading as Arrow columns, without
// the Arrow schema a writer may store in the footer: arrow-go decodes it
// with the IPC reader, which trusts its counts (see arrowNotRead), and
// fuzzing found damaged footers that made it allocate 236 GB. The Parquet
// logical types give back every type hitflow writes.
func openParquet(name string) (*file.Reader, *pqarrow.FileReader, error) {
	rdr, err := file.OpenParquetFile(name, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	md := rdr.MetaData()
	kept := md.FileMetaData.KeyValueMetadata[:0]
	for _, kv := range md.FileMetaData.KeyValueMetadata {
		if kv.Key != "ARROW:schema" {
			kept = append(kept, kv)
		}
	}
	md.FileMetaData.KeyValueMetadata = kept
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		rdr.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return rdr, fr, nil
}

// checkColumns reports a column of fields missing from the table.
func checkColumns(name string, tbl arrow.Table, fields []arrow.Field) error {
	for _, want := range fields {
		idx := tbl.Schema().FieldIndices(want.Name)
		if len(idx) != 1 || !arrow.TypeEqual(tbl.Schema().Field(idx[0]).Type, want.Type) {
			return fmt.Errorf("%s: no column %s of type %s", name, want.Name, want.Type)
		}
	}
	return nil
}

// eachChunk calls fn with every chunk of the named column.
func eachChunk(tbl arrow.Table, col string, fn func(a arrow.Array)) {
	for _, c := range tbl.Column(tbl.Schema().FieldIndices(col)[0]).Data().Chunks() {
		fn(c)
	}
}

// clustersFromTable converts a table with the columns of
// [ClusterParquetFields].
func clustersFromTable(tbl arrow.Table) *pixel.Clusters {
	c := &pixel.Clusters{}
	c.Reset()
	eachChunk(tbl, "id", func(a arrow.Array) { c.ID = append(c.ID, a.(*array.Int64).Int64Values()...) })
	eachChunk(tbl, "size", func(a arrow.Array) { c.Size = append(c.Size, a.(*array.Int32).Int32Values()...) })
	eachChunk(tbl, "toa_ns", func(a arrow.Array) {
		for _, v := range a.(*array.Float64).Float64Values() {
			c.FirstToA = append(c.FirstToA, pixel.TimeFromNs(v))
		}
	})
	i := 0
	eachChunk(tbl, "span_ns", func(a arrow.Array) {
		for _, v := range a.(*array.Float64).Float64Values() {
			c.LastToA = append(c.LastToA, c.FirstToA[i]+pixel.TimeFromNs(v))
			i++
		}
	})
	eachChunk(tbl, "tot_sum", func(a arrow.Array) { c.ToTSum = append(c.ToTSum, a.(*array.Int64).Int64Values()...) })
	eachChunk(tbl, "energy_kev", func(a arrow.Array) {
		c.Calibrated = a.NullN() == 0 && a.Len() > 0
		c.ESum = append(c.ESum, a.(*array.Float64).Float64Values()...)
	})
	if !c.Calibrated {
		clear(c.ESum)
	}
	f64 := func(col string, dst *[]float64) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Float64).Float64Values()...) })
	}
	u16 := func(col string, dst *[]uint16) {
		eachChunk(tbl, col, func(a arrow.Array) { *dst = append(*dst, a.(*array.Uint16).Uint16Values()...) })
	}
	f64("x", &c.X)
	f64("y", &c.Y)
	u16("xmin", &c.XMin)
	u16("xmax", &c.XMax)
	u16("ymin", &c.YMin)
	u16("ymax", &c.YMax)
	f64("max", &c.Max)
	return c
}

// readClusterCSV reads the cluster CSV; errors name the line.
func readClusterCSV(name string) (*pixel.Clusters, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &pixel.Clusters{}
	c.Reset()
	sc := textscan.New(f, name, "clusters csv")
	var fs [][]byte
	for text := range sc.Lines() {
		if sc.Line() == 1 {
			if string(text) != ClusterCSVHeader {
				return nil, sc.Errorf("header %q, want %q", text, ClusterCSVHeader)
			}
			continue
		}
		fs = textscan.Fields(fs, text, ',')
		if len(fs) != 13 {
			return nil, sc.Errorf("%d fields, want 13", len(fs))
		}
		var v [13]float64
		for k, s := range fs {
			if k == 5 && len(s) == 0 {
				continue
			}
			var ok bool
			if v[k], ok = textscan.ParseFloat(s); !ok {
				return nil, sc.Errorf("field %d: %q is not a number", k+1, s)
			}
		}
		c.Calibrated = len(fs[5]) != 0
		toa := pixel.TimeFromNs(v[2])
		c.ID, c.Size = append(c.ID, int64(v[0])), append(c.Size, int32(v[1]))
		c.FirstToA, c.LastToA = append(c.FirstToA, toa), append(c.LastToA, toa+pixel.TimeFromNs(v[3]))
		c.ToTSum, c.ESum = append(c.ToTSum, int64(v[4])), append(c.ESum, v[5])
		c.X, c.Y = append(c.X, v[6]), append(c.Y, v[7])
		c.XMin, c.XMax = append(c.XMin, uint16(v[8])), append(c.XMax, uint16(v[9]))
		c.YMin, c.YMax = append(c.YMin, uint16(v[10])), append(c.YMax, uint16(v[11]))
		c.Max = append(c.Max, v[12])
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if sc.Line() == 0 {
		return nil, fmt.Errorf("clusters csv: %s: empty file, want the header %q", name, ClusterCSVHeader)
	}
	return c, nil
}

// ReadHits reads a per-hit label file (.csv or .parquet) written by
// [CreateHits].
func ReadHits(name string) (l *pixel.Labelled, err error) {
	defer recoverDamage(name, &err)
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".csv":
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return tpx3.ReadLabelled(f, name)
	case ".arrow":
		return nil, arrowNotRead(name, hitsRead)
	case ".parquet":
		tbl, err := readParquet(name, HitParquetFields)
		if err != nil {
			return nil, err
		}
		defer tbl.Release()
		return hitsFromTable(tbl), nil
	default:
		return nil, fmt.Errorf("%s: %w %q for hits (want .csv or .parquet)", name, ErrUnknownFormat, ext)
	}
}

// hitsFromTable converts a table with the columns of [HitParquetFields].
func hitsFromTable(tbl arrow.Table) *pixel.Labelled {
	l := &pixel.Labelled{}
	h := &l.Hits
	eachChunk(tbl, "x", func(a arrow.Array) { h.X = append(h.X, a.(*array.Uint16).Uint16Values()...) })
	eachChunk(tbl, "y", func(a arrow.Array) { h.Y = append(h.Y, a.(*array.Uint16).Uint16Values()...) })
	eachChunk(tbl, "toa_ns", func(a arrow.Array) {
		for _, v := range a.(*array.Float64).Float64Values() {
			h.ToA = append(h.ToA, pixel.TimeFromNs(v))
		}
	})
	eachChunk(tbl, "tot", func(a arrow.Array) { h.ToT = append(h.ToT, a.(*array.Uint16).Uint16Values()...) })
	calibrated := true
	eachChunk(tbl, "energy_kev", func(a arrow.Array) {
		calibrated = calibrated && a.NullN() == 0
		h.E = append(h.E, a.(*array.Float32).Float32Values()...)
	})
	if !calibrated {
		h.E = nil
	}
	eachChunk(tbl, "cluster", func(a arrow.Array) { l.Labels = append(l.Labels, a.(*array.Int64).Int64Values()...) })
	return l
}

// Kind says what a result file holds: "clusters", "clue" or "pet" (an
// NRRD image), from its extension and its columns, header or trees.
func Kind(name string) (kind string, err error) {
	defer recoverDamage(name, &err)
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".nrrd":
		return "pet", nil
	case ".clog":
		return "", fmt.Errorf("%s: .clog files are written, not read; plot the .csv, .parquet or .root", name)
	case ".csv":
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		if strings.TrimRight(line, "\r\n") == ClusterCSVHeader {
			return "clusters", nil
		}
		return "clue", nil
	case ".parquet":
		// The schema is in the footer: no need to read the columns.
		rdr, fr, err := openParquet(name)
		if err != nil {
			return "", err
		}
		defer rdr.Close()
		schema, err := fr.Schema()
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if len(schema.FieldIndices("tot_sum")) > 0 {
			return "clusters", nil
		}
		return "clue", nil
	case ".arrow":
		return "", arrowNotRead(name, tablesRead)
	case ".root":
		rep, err := readROOT("kind", name)
		if err != nil {
			return "", err
		}
		return rep.Kind, nil
	default:
		return "", fmt.Errorf("%s: %w %q", name, ErrUnknownFormat, ext)
	}
}
