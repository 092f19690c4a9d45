package text

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/hitflow/hitflow/internal/ctxio"
	"github.com/hitflow/hitflow/internal/textfmt"
	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/internal/textscan"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// ClusterCSV writes one row per cluster.
type ClusterCSV struct {
	w    *bufio.Writer
	text textparts.Parts
	cols Columns
}

// Columns choose the optional columns of a cluster table.
type Columns struct {
	Shapes bool // the morphology (ShapeCSVColumns)
	TOF    bool // the time of flight (TOFCSVColumns)
	// FlightPath, when positive with TOF, is the flight path in metres:
	// the neutron energy and wavelength follow (FlightCSVColumns).
	FlightPath float64
}

// CSVDecimals is the precision of the cluster CSV's energy_kev, x, y and
// max: 10^-4 pixel (5.5 nm on a 55 um pitch) and 0.1 eV are far below
// what a detector resolves, and a fixed number of decimals formats much
// faster than the shortest decimal that reads back exactly (the binary
// formats keep every bit). Trailing zeros are left out.
const CSVDecimals = 4

// ClusterCSVHeader is the header line of the cluster CSV.
const ClusterCSVHeader = "id,size,toa_ns,span_ns,tot_sum,energy_kev,x,y,xmin,xmax,ymin,ymax,max"

// The optional columns of the cluster CSV, in this order after the
// header's: the morphology (see pixel.Clusters.HasShapes; class by name),
// the time of flight (pixel.Clusters.HasTOF; empty before the first
// pulse), and the neutron energy and wavelength of a flight path.
const (
	ShapeCSVColumns  = ",pixels,inner,roundness,linearity,length,width,class"
	TOFCSVColumns    = ",tof_ns,pulse"
	FlightCSVColumns = ",energy_ev,wavelength_a"
)

// header is the header line of a table with the columns.
func (c Columns) header() string {
	h := ClusterCSVHeader
	if c.Shapes {
		h += ShapeCSVColumns
	}
	if c.TOF {
		h += TOFCSVColumns
		if c.FlightPath > 0 {
			h += FlightCSVColumns
		}
	}
	return h
}

// NewClusterCSV writes the header and returns the writer; every row has
// the optional columns chosen.
func NewClusterCSV(w io.Writer, cols Columns) (*ClusterCSV, error) {
	c := &ClusterCSV{w: bufio.NewWriterSize(w, textparts.BufferSize), cols: cols}
	_, err := c.w.WriteString(cols.header() + "\n")
	return c, err
}

func (c *ClusterCSV) NeedsMembers() bool { return c.cols.Shapes }

func (c *ClusterCSV) Write(cl *pixel.Clusters) error {
	if err := c.cols.check(cl); err != nil {
		return err
	}
	return c.text.Write(c.w, cl.Len(), func(dst []byte, lo, hi int) []byte { return appendClusterRows(dst, cl, lo, hi, c.cols) })
}

// check refuses clusters without the columns chosen.
func (c Columns) check(cl *pixel.Clusters) error {
	if c.Shapes && !cl.HasShapes() {
		return errors.New("the clusters carry no morphology columns (see pixel/analysis)")
	}
	if c.TOF && !cl.HasTOF() {
		return errors.New("the clusters carry no time of flight (see pixel/analysis)")
	}
	return nil
}

// maxClusterRow bounds the bytes of a row of the cluster CSV, with its
// morphology columns.
const maxClusterRow = 3*pixel.MaxNsLen + 20*textfmt.MaxLen + 24 + 16

// appendClusterRows appends the CSV rows of clusters [lo, hi) of cl. The
// room for a row is reserved once, and its fields written in place.
func appendClusterRows(l []byte, cl *pixel.Clusters, lo, hi int, cols Columns) []byte {
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
		if span := cl.LastToA[i] - cl.FirstToA[i]; span == 0 { // every single hit's
			b[n] = '0'
			n++
		} else {
			n += pixel.PutNs(b[n:], span)
		}
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
		if cols.Shapes {
			for _, v := range [...]int32{cl.Pixels[i], cl.Inner[i]} {
				b[n] = ','
				n++
				n += textfmt.PutUint(b[n:], uint64(v))
			}
			for _, v := range [...]float64{cl.Roundness[i], cl.Linearity[i], cl.Length[i], cl.Width[i]} {
				b[n] = ','
				n++
				n += textfmt.PutFixed(b[n:], v, CSVDecimals)
			}
			b[n] = ','
			n++
			n += copy(b[n:], analysis.Class(cl.Class[i]).String())
		}
		if cols.TOF {
			n += putTOF(b[n:], cl.TOF[i], cl.Pulse[i], cols.FlightPath)
		}
		b[n] = '\n'
		l = l[:len(l)+n+1]
	}
	return l
}

// putTOF writes the time-of-flight fields of a cluster into b and
// returns their length: empty before the first pulse, and the energy and
// wavelength empty for a time of flight of zero.
func putTOF(b []byte, tof pixel.Time, pulse int64, path float64) int {
	n := 0
	b[n] = ','
	n++
	if pulse >= 0 {
		n += pixel.PutNs(b[n:], tof)
	}
	b[n] = ','
	n++
	if pulse >= 0 {
		n += textfmt.PutInt(b[n:], pulse)
	}
	if path > 0 {
		energy, wavelength, ok := analysis.Neutron(tof, pulse, path)
		for _, v := range [...]float64{energy, wavelength} {
			b[n] = ','
			n++
			if ok {
				n += len(strconv.AppendFloat(b[n:n], v, 'g', 7, 64))
			}
		}
	}
	return n
}

// Flush writes the lines held.
func (c *ClusterCSV) Flush() error { return c.w.Flush() }

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

// Flush writes the lines held.
func (c *CLog) Flush() error { return c.w.Flush() }

func (c *CLog) Close() error { return c.w.Flush() }

// ReadClusters reads a cluster CSV whole; errors name the line.
func ReadClusters(name string) (*pixel.Clusters, error) {
	var all *pixel.Clusters
	err := scanClusters(name, blockSize, runtime.GOMAXPROCS(0), true, func(c *pixel.Clusters) error {
		all = c
		return nil
	})
	return all, err
}

// ScanClusters reads a cluster CSV a block of rows at a time: fn gets
// each, valid during the call; an error of fn ends the reading and is
// returned. The last batch may be empty. Errors name the line.
func ScanClusters(name string, fn func(*pixel.Clusters) error) error {
	return scanClusters(name, blockSize, runtime.GOMAXPROCS(0), false, fn)
}

// blockSize is how much text a cluster CSV reader parses at a time, in
// parts on all cores.
const blockSize = 4 << 20

// scanClusters reads the file in blocks of about block bytes, each cut
// into workers parts parsed at once, every line a row. With whole, the
// rows of every block are kept and fn gets them all once, at the end;
// otherwise fn gets each block's rows.
func scanClusters(name string, block, workers int, whole bool, fn func(*pixel.Clusters) error) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := textscan.New(f, name, "clusters csv")
	h, err := sc.Next()
	if err == io.EOF {
		return fmt.Errorf("clusters csv: %s: empty file, want the header %q", name, ClusterCSVHeader)
	}
	if err != nil {
		return err
	}
	cols, ok := headerColumns(string(h))
	if !ok {
		return sc.Errorf("header %q, want %q and any of %q, %q (and %q)", h, ClusterCSVHeader, ShapeCSVColumns[1:], TOFCSVColumns[1:], FlightCSVColumns[1:])
	}
	rows := &clusterRows{cols: cols, fields: strings.Count(cols.header(), ",") + 1, c: &pixel.Clusters{}}
	rows.c.Reset()
	var size int64 // a whole file's columns are sized once, from its size
	if whole {
		size = ctxio.Size(f)
	}
	_, err = sc.ReadRows(rows, 0, block, workers, size, func(n int) (int, error) {
		if n > 0 { // as row after row: the last row's energy says
			rows.c.Calibrated = rows.calibrated[n-1]
		}
		if whole {
			return n, nil
		}
		if err := fn(rows.c); err != nil {
			return 0, err
		}
		rows.Resize(0, 0)
		return 0, nil
	})
	if err != nil {
		return err
	}
	return fn(rows.c) // whole, or the last batch, empty
}

// clusterRows are the rows of a cluster CSV with the given columns, for
// textscan.ReadRows, and whether each has an energy.
type clusterRows struct {
	cols       Columns
	fields     int // in a row
	c          *pixel.Clusters
	calibrated []bool
}

func (r *clusterRows) Resize(n, room int) {
	c := r.c
	c.ID, c.Size, c.FirstToA, c.LastToA = textscan.Resize(c.ID, n, room), textscan.Resize(c.Size, n, room), textscan.Resize(c.FirstToA, n, room), textscan.Resize(c.LastToA, n, room)
	c.ToTSum, c.ESum, c.X, c.Y = textscan.Resize(c.ToTSum, n, room), textscan.Resize(c.ESum, n, room), textscan.Resize(c.X, n, room), textscan.Resize(c.Y, n, room)
	c.XMin, c.XMax, c.YMin, c.YMax = textscan.Resize(c.XMin, n, room), textscan.Resize(c.XMax, n, room), textscan.Resize(c.YMin, n, room), textscan.Resize(c.YMax, n, room)
	c.Max, r.calibrated = textscan.Resize(c.Max, n, room), textscan.Resize(r.calibrated, n, room)
	if r.cols.Shapes {
		c.Pixels, c.Inner, c.Class = textscan.Resize(c.Pixels, n, room), textscan.Resize(c.Inner, n, room), textscan.Resize(c.Class, n, room)
		c.Roundness, c.Linearity = textscan.Resize(c.Roundness, n, room), textscan.Resize(c.Linearity, n, room)
		c.Length, c.Width = textscan.Resize(c.Length, n, room), textscan.Resize(c.Width, n, room)
	}
	if r.cols.TOF {
		c.TOF, c.Pulse = textscan.Resize(c.TOF, n, room), textscan.Resize(c.Pulse, n, room)
	}
}

// Move has nothing to do: every line is a row, so only a part that
// fails leaves room unused, and the rows of a failed read are dropped.
func (r *clusterRows) Move(to, from, n int) {}

// Parse reads the lines of a part into the rows from at on, one a line.
func (r *clusterRows) Parse(sc *textscan.Scanner, at int) (int, error) {
	var fs [][]byte
	i := at
	for text := range sc.Lines() {
		var err error
		if r.calibrated[i], fs, err = r.row(sc, text, fs, i); err != nil {
			return i - at, err
		}
		i++
	}
	return i - at, sc.Err()
}

// row reads the line text into row i, and says whether it has an energy;
// fs is room for its fields.
func (r *clusterRows) row(sc *textscan.Scanner, text []byte, fs [][]byte, i int) (calibrated bool, _ [][]byte, _ error) {
	c, cols := r.c, r.cols
	var v [24]float64
	plain := !cols.Shapes && !cols.TOF
	if plain {
		calibrated, plain = plainRow(text, &v)
	}
	if !plain {
		v = [24]float64{}
		fs = textscan.Fields(fs, text, ',')
		if len(fs) != r.fields {
			return false, fs, sc.Errorf("%d fields, want %d", len(fs), r.fields)
		}
		// Numbers, but for the class name; empty: energy_kev without
		// calibration, the time of flight before the first pulse.
		for k, s := range fs {
			if k == 19 && cols.Shapes || len(s) == 0 && (k == 5 || k >= 13 && !(cols.Shapes && k < 20)) {
				continue
			}
			var ok bool
			if v[k], ok = textscan.ParseFloat(s); !ok {
				return false, fs, sc.Errorf("field %d: %q is not a number", k+1, s)
			}
		}
		calibrated = len(fs[5]) != 0
	}
	toa := pixel.TimeFromNs(v[2])
	c.ID[i], c.Size[i] = int64(v[0]), int32(v[1])
	c.FirstToA[i], c.LastToA[i] = toa, toa+pixel.TimeFromNs(v[3])
	c.ToTSum[i], c.ESum[i] = int64(v[4]), v[5]
	c.X[i], c.Y[i] = v[6], v[7]
	c.XMin[i], c.XMax[i], c.YMin[i], c.YMax[i] = uint16(v[8]), uint16(v[9]), uint16(v[10]), uint16(v[11])
	c.Max[i] = v[12]
	k := 13
	if cols.Shapes {
		class, err := analysis.ParseClass(string(fs[19]))
		if err != nil {
			return false, fs, sc.Errorf("field 20: %v", err)
		}
		c.Pixels[i], c.Inner[i], c.Class[i] = int32(v[13]), int32(v[14]), uint8(class)
		c.Roundness[i], c.Linearity[i], c.Length[i], c.Width[i] = v[15], v[16], v[17], v[18]
		k = 20
	}
	if cols.TOF {
		pulse := int64(-1)
		if len(fs[k+1]) != 0 {
			pulse = int64(v[k+1])
		}
		if (len(fs[k]) == 0) != (pulse < 0) {
			return false, fs, sc.Errorf("tof_ns %q and pulse %q: both or neither", fs[k], fs[k+1])
		}
		c.TOF[i], c.Pulse[i] = pixel.TimeFromNs(v[k]), pulse
	}
	return calibrated, fs, nil
}

// plainRow reads a row of the plain cluster CSV (13 fields, energy_kev
// empty without calibration) into v in one pass, each field a plain
// decimal (textscan.Decimal), without cutting the row into fields first;
// false for any other row, which the field parser takes (and names its
// errors). It says whether the row has an energy.
func plainRow(row []byte, v *[24]float64) (calibrated, ok bool) {
	at := 0
	for k := range 13 {
		if k > 0 {
			if at == len(row) || row[at] != ',' {
				return false, false
			}
			at++
		}
		if k == 5 && (at == len(row) || row[at] == ',') {
			continue
		}
		x, n, ok := textscan.Decimal(row[at:])
		if !ok {
			return false, false
		}
		v[k], at = x, at+n
		calibrated = calibrated || k == 5
	}
	return calibrated, at == len(row)
}

// headerColumns are the optional columns of a cluster CSV header line.
func headerColumns(h string) (Columns, bool) {
	for _, shapes := range []bool{false, true} {
		for _, path := range []float64{-1, 0, 1} { // no TOF, TOF, TOF with a flight path
			c := Columns{Shapes: shapes, TOF: path >= 0, FlightPath: path}
			if c.header() == h {
				return c, true
			}
		}
	}
	return Columns{}, false
}

// Kind says what a CSV result file holds from its header: "clusters"
// (the header of [ClusterCSV]), "hits" (a label file of cluster --hits,
// with toa_ns and cluster columns) or "clue".
func Kind(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	line = strings.TrimRight(line, "\r\n")
	if _, ok := headerColumns(line); ok {
		return "clusters", nil
	}
	if cols := strings.Split(line, ","); slices.Contains(cols, "cluster") && slices.Contains(cols, "toa_ns") {
		return "hits", nil
	}
	return "clue", nil
}
