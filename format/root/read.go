package root

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/internal/damage"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// The ROOT files hitflow writes are read here, in this process, without
// groot: groot decodes baskets on goroutines of its own, where a panic on
// a damaged file cannot be recovered, and sizes its allocations by counts
// in the file. This reader walks the file's records from the first to
// the last, takes the baskets of the tree it wants, checks every size
// against the record that holds it before allocating, and decodes the
// branches of hitflow's own trees by their known types. A damaged or
// foreign file is an error naming it and the byte where it went wrong.

// maxBasket bounds the uncompressed size of a basket: hitflow writes
// baskets of 1 MiB, so that a damaged size cannot ask for gigabytes.
const maxBasket = 64 << 20

// basket is a TBasket record: where it is and what its header says.
type basket struct {
	pos          int64
	nbytes       int32 // the record, key included
	objlen       int32 // the payload, uncompressed
	keylen       int32
	cycle        int16
	nevsize      int32 // an entry's size for scalar branches
	nevbuf, last int32 // entries, and the end of their data (offset from the key's start)
}

// reader holds a ROOT file's baskets by tree and branch.
type reader struct {
	name    string
	f       *os.File
	size    int64
	trees   []string
	baskets map[string]map[string][]basket // tree -> branch -> baskets
}

// open walks the records of a ROOT file.
func open(name string) (*reader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r := &reader{name: name, f: f, size: fi.Size(), baskets: map[string]map[string][]basket{}}
	if err := r.walk(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *reader) close() { r.f.Close() }

// damaged is the error for a file that is not what hitflow writes.
func (r *reader) damaged(pos int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s", r.name, pos, fmt.Sprintf(format, args...))
}

// walk reads the file header and every record's key.
func (r *reader) walk() error {
	head := make([]byte, 20)
	if _, err := r.f.ReadAt(head, 0); err != nil || string(head[:4]) != "root" {
		return fmt.Errorf("%s: not a ROOT file", r.name)
	}
	be := binary.BigEndian
	version, begin := int32(be.Uint32(head[4:])), int64(int32(be.Uint32(head[8:])))
	end := int64(int32(be.Uint32(head[12:])))
	if version >= 1000000 {
		end = int64(be.Uint64(head[12:]))
	}
	if begin < 20 || end > r.size || begin > end {
		return r.damaged(4, "records from %d to %d in a file of %d bytes", begin, end, r.size)
	}
	key := make([]byte, 512)
	for pos := begin; pos < end; {
		n, err := r.f.ReadAt(key[:min(int64(len(key)), end-pos)], pos)
		if err != nil && err != io.EOF || n < 4 {
			return r.damaged(pos, "cannot read the record: %v", err)
		}
		nbytes := int64(int32(be.Uint32(key)))
		if nbytes < 0 { // a free gap
			pos -= nbytes
			continue
		}
		if nbytes < 26 || pos+nbytes > end {
			return r.damaged(pos, "a record of %d bytes", nbytes)
		}
		if err := r.record(pos, key[:min(int64(n), nbytes)]); err != nil {
			return err
		}
		pos += nbytes
	}
	return nil
}

// record takes a record's key: trees and baskets are kept.
func (r *reader) record(pos int64, k []byte) error {
	d := &decoder{b: k}
	nbytes := d.i32()
	version := d.i16()
	objlen := d.i32()
	d.skip(4) // date
	keylen := int32(d.i16())
	cycle := d.i16()
	if version > 1000 {
		d.skip(16)
	} else {
		d.skip(8)
	}
	class, name, title := d.str(), d.str(), d.str()
	if d.err || keylen > nbytes || objlen < 0 {
		return r.damaged(pos, "a damaged record key")
	}
	switch class {
	case "TTree":
		r.trees = append(r.trees, name)
	case "TBasket":
		d.skip(2) // the basket's version
		d.skip(4) // its buffer size
		b := basket{pos: pos, nbytes: nbytes, objlen: objlen, keylen: keylen, cycle: cycle,
			nevsize: d.i32(), nevbuf: d.i32(), last: d.i32()}
		if d.err || b.objlen > maxBasket || b.nevbuf < 0 || b.last < keylen || b.last-keylen > objlen {
			return r.damaged(pos, "a damaged basket of branch %s", name)
		}
		if r.baskets[title] == nil {
			r.baskets[title] = map[string][]basket{}
		}
		r.baskets[title][name] = append(r.baskets[title][name], b)
	}
	return nil
}

// decoder reads big-endian fields; err is sticky.
type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) take(n int) []byte {
	if d.err || n > len(d.b) || n < 0 {
		d.err = true
		return make([]byte, min(max(n, 0), 8)) // enough for the fixed-size fields
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) skip(n int)  { d.take(n) }
func (d *decoder) i16() int16  { return int16(binary.BigEndian.Uint16(d.take(2))) }
func (d *decoder) i32() int32  { return int32(binary.BigEndian.Uint32(d.take(4))) }
func (d *decoder) u32() uint32 { return binary.BigEndian.Uint32(d.take(4)) }

// str reads a ROOT string: a length byte, or 255 and a 32-bit length.
func (d *decoder) str() string {
	n := int(d.take(1)[0])
	if n == 255 {
		n = int(d.i32())
	}
	return string(d.take(n))
}

// tree returns the branches of a tree in the order the tree declares
// them, each with its baskets in entry order. groot writes every
// branch's last basket when the file is closed, branch by branch in that
// order; a branch's baskets carry increasing cycles.
func (r *reader) tree(name string) ([]string, map[string][]basket, error) {
	branches := r.baskets[name]
	if !slices.Contains(r.trees, name) {
		return nil, nil, fmt.Errorf("%s: no tree %q", r.name, name)
	}
	var names []string
	for b, bs := range branches {
		slices.SortFunc(bs, func(x, y basket) int { return cmp.Compare(x.cycle, y.cycle) })
		names = append(names, b)
	}
	slices.SortFunc(names, func(x, y string) int {
		bx, by := branches[x], branches[y]
		return cmp.Compare(bx[len(bx)-1].pos, by[len(by)-1].pos)
	})
	return names, branches, nil
}

// data reads a basket's entries: the payload up to its last entry,
// decompressed when it is.
func (r *reader) data(b basket, zr *zstd.Decoder) ([]byte, error) {
	stored := make([]byte, b.nbytes-b.keylen)
	if _, err := r.f.ReadAt(stored, b.pos+int64(b.keylen)); err != nil {
		return nil, r.damaged(b.pos, "cannot read the basket: %v", err)
	}
	out := stored
	if len(stored) != int(b.objlen) {
		out = make([]byte, 0, b.objlen)
		for in := stored; len(in) > 0; {
			if len(in) < 9 {
				return nil, r.damaged(b.pos, "a damaged compressed block")
			}
			alg := string(in[:2])
			src := int(in[3]) | int(in[4])<<8 | int(in[5])<<16
			dst := int(in[6]) | int(in[7])<<8 | int(in[8])<<16
			if 9+src > len(in) || len(out)+dst > int(b.objlen) {
				return nil, r.damaged(b.pos, "a compressed block of %d bytes to %d", src, dst)
			}
			block, err := inflate(alg, in[9:9+src], dst, zr)
			if err != nil || len(block) != dst {
				return nil, r.damaged(b.pos, "a damaged %s block: %v", alg, err)
			}
			out = append(out, block...)
			in = in[9+src:]
		}
		if len(out) != int(b.objlen) {
			return nil, r.damaged(b.pos, "%d bytes uncompressed, want %d", len(out), b.objlen)
		}
	}
	return out[:b.last-b.keylen], nil
}

// inflate decompresses a block of ROOT's formats hitflow meets: zstd
// (what it writes) and zlib.
func inflate(alg string, src []byte, n int, zr *zstd.Decoder) ([]byte, error) {
	switch alg {
	case "ZS":
		return zr.DecodeAll(src, make([]byte, 0, n))
	case "ZL":
		z, err := zlib.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		out := make([]byte, n)
		if _, err := io.ReadFull(z, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("compression %q, which hitflow does not write", alg)
}

// column decodes a branch: fixed-size entries of size bytes each (vector
// false), or a std::vector of such elements per entry; fn gets each
// entry's bytes. It returns the number of entries.
func (r *reader) column(branch string, bs []basket, size int, vector bool, zr *zstd.Decoder, fn func(entry []byte)) (int, error) {
	n := 0
	for _, b := range bs {
		data, err := r.data(b, zr)
		if err != nil {
			return n, err
		}
		if !vector {
			if b.nevsize != int32(size) || len(data) != int(b.nevbuf)*size {
				return n, r.damaged(b.pos, "branch %s: %d bytes for %d entries of %d", branch, len(data), b.nevbuf, size)
			}
			for i := range int(b.nevbuf) {
				fn(data[i*size : (i+1)*size])
			}
			n += int(b.nevbuf)
			continue
		}
		// An entry: a byte count (with ROOT's flag bit), a version, the
		// element count, the elements.
		d := &decoder{b: data}
		for range b.nevbuf {
			count := d.u32()
			d.skip(2)
			elems := int(d.i32())
			if d.err || count&0x40000000 == 0 || elems < 0 || elems > len(d.b)/size || int(count&^0x40000000) != 6+elems*size {
				return n, r.damaged(b.pos, "branch %s: a damaged entry", branch)
			}
			fn(d.take(elems * size))
			if d.err {
				return n, r.damaged(b.pos, "branch %s: an entry past the basket's end", branch)
			}
			n++
		}
	}
	return n, nil
}

// Kind names the tree a ROOT file holds: "clusters" or "clue".
func Kind(name string) (kind string, err error) {
	defer damage.Recover(name, &err)
	r, err := open(name)
	if err != nil {
		return "", err
	}
	defer r.close()
	for _, t := range r.trees {
		if t == "clusters" || t == "clue" {
			return t, nil
		}
	}
	return "", fmt.Errorf("%s: no clusters or clue tree", name)
}

func f64(b []byte) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b)) }
func f32(b []byte) float32 { return math.Float32frombits(binary.BigEndian.Uint32(b)) }
func i64(b []byte) int64   { return int64(binary.BigEndian.Uint64(b)) }
func i32(b []byte) int32   { return int32(binary.BigEndian.Uint32(b)) }
func u16(b []byte) uint16  { return binary.BigEndian.Uint16(b) }

// branchType is a branch's element size and whether it holds vectors.
type branchType struct {
	size   int
	vector bool
}

// columns reads every branch of a tree with its type, checking that all
// have the same number of entries; it returns that number.
func (r *reader) columns(tree string, types func(branch string) (branchType, bool), read map[string]func([]byte)) (int, error) {
	names, baskets, err := r.tree(tree)
	if err != nil {
		return 0, err
	}
	zr, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBasket))
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	entries := -1
	for _, b := range names {
		t, ok := types(b)
		fn := read[b]
		if !ok || fn == nil {
			return 0, fmt.Errorf("%s: tree %s has a branch %q that hitflow does not write", r.name, tree, b)
		}
		n, err := r.column(b, baskets[b], t.size, t.vector, zr, fn)
		if err != nil {
			return 0, err
		}
		if entries >= 0 && n != entries {
			return 0, fmt.Errorf("%s: tree %s: branch %s has %d entries, others %d", r.name, tree, b, n, entries)
		}
		entries = n
	}
	return max(entries, 0), nil
}

// clusterTypes are the branches of the clusters tree.
var clusterTypes = map[string]branchType{
	"id": {8, false}, "size": {4, false}, "toa_ns": {8, false}, "span_ns": {8, false},
	"tot_sum": {8, false}, "energy_kev": {8, false}, "calibrated": {1, false},
	"cx": {8, false}, "cy": {8, false}, "xmin": {2, false}, "xmax": {2, false},
	"ymin": {2, false}, "ymax": {2, false}, "max": {8, false}, "n": {4, false},
	"x": {2, true}, "y": {2, true}, "toa": {8, true}, "tot": {2, true}, "e": {4, true},
}

// optionalTypes are the optional branches of the clusters tree (see
// Columns), by group: a group is read when all of its branches are there.
var optionalTypes = map[string]branchType{
	"pixels": {4, false}, "inner": {4, false}, "roundness": {8, false}, "linearity": {8, false},
	"length": {8, false}, "width": {8, false}, "class": {4, false},
	"tof_ns": {8, false}, "pulse": {8, false}, "energy_ev": {8, false}, "wavelength_a": {8, false},
}

// ReadClusters reads the clusters tree of a file written by
// [CreateClusters], the hits of each cluster as Members, and the
// optional columns it has.
func ReadClusters(name string) (c *pixel.Clusters, err error) {
	defer damage.Recover(name, &err)
	r, err := open(name)
	if err != nil {
		return nil, err
	}
	defer r.close()
	var (
		first, span           []float64
		calibrated            []bool
		n                     []int32
		hx, hy, htot          []uint16
		htoa                  []float64
		he                    []float32
		hitsX, hitsY, hitsToT []int // entry ends in hx, hy, htot
		hitsToA, hitsE        []int
	)
	c = &pixel.Clusters{}
	c.Reset()
	read := map[string]func([]byte){
		"id":         func(b []byte) { c.ID = append(c.ID, i64(b)) },
		"size":       func(b []byte) { c.Size = append(c.Size, i32(b)) },
		"toa_ns":     func(b []byte) { first = append(first, f64(b)) },
		"span_ns":    func(b []byte) { span = append(span, f64(b)) },
		"tot_sum":    func(b []byte) { c.ToTSum = append(c.ToTSum, i64(b)) },
		"energy_kev": func(b []byte) { c.ESum = append(c.ESum, f64(b)) },
		"calibrated": func(b []byte) { calibrated = append(calibrated, b[0] != 0) },
		"cx":         func(b []byte) { c.X = append(c.X, f64(b)) },
		"cy":         func(b []byte) { c.Y = append(c.Y, f64(b)) },
		"xmin":       func(b []byte) { c.XMin = append(c.XMin, u16(b)) },
		"xmax":       func(b []byte) { c.XMax = append(c.XMax, u16(b)) },
		"ymin":       func(b []byte) { c.YMin = append(c.YMin, u16(b)) },
		"ymax":       func(b []byte) { c.YMax = append(c.YMax, u16(b)) },
		"max":        func(b []byte) { c.Max = append(c.Max, f64(b)) },
		"n":          func(b []byte) { n = append(n, i32(b)) },
		"x":          vectorOf(&hx, &hitsX, 2, u16),
		"y":          vectorOf(&hy, &hitsY, 2, u16),
		"tot":        vectorOf(&htot, &hitsToT, 2, u16),
		"toa":        vectorOf(&htoa, &hitsToA, 8, f64),
		"e":          vectorOf(&he, &hitsE, 4, f32),
		"pixels":     func(b []byte) { c.Pixels = append(c.Pixels, i32(b)) },
		"inner":      func(b []byte) { c.Inner = append(c.Inner, i32(b)) },
		"roundness":  func(b []byte) { c.Roundness = append(c.Roundness, f64(b)) },
		"linearity":  func(b []byte) { c.Linearity = append(c.Linearity, f64(b)) },
		"length":     func(b []byte) { c.Length = append(c.Length, f64(b)) },
		"width":      func(b []byte) { c.Width = append(c.Width, f64(b)) },
		"class":      func(b []byte) { c.Class = append(c.Class, uint8(min(uint32(i32(b)), 255))) },
		"tof_ns":     func(b []byte) { c.TOF = append(c.TOF, pixel.TimeFromNs(f64(b))) },
		"pulse":      func(b []byte) { c.Pulse = append(c.Pulse, i64(b)) },
		// Derived from tof_ns with the flight path.
		"energy_ev":    func([]byte) {},
		"wavelength_a": func([]byte) {},
	}
	types := func(b string) (branchType, bool) {
		if t, ok := clusterTypes[b]; ok {
			return t, ok
		}
		t, ok := optionalTypes[b]
		return t, ok
	}
	entries, err := r.columns("clusters", types, read)
	if err != nil {
		return nil, err
	}
	for b := range clusterTypes {
		if _, ok := r.baskets["clusters"][b]; !ok && entries > 0 {
			return nil, fmt.Errorf("%s: the clusters tree has no branch %s", name, b)
		}
	}
	// A group partly there is a tree hitflow did not write.
	if len(c.Class) != len(c.Pixels) || len(c.Class) != len(c.Width) || len(c.TOF) != len(c.Pulse) {
		return nil, fmt.Errorf("%s: the clusters tree has some of the branches of a group, not all", name)
	}
	for k, class := range c.Class {
		if int(class) >= len(analysis.Classes) {
			return nil, fmt.Errorf("%s: cluster %d: class %d out of range", name, k, class)
		}
	}
	for k, p := range c.Pulse {
		if p < -1 {
			return nil, fmt.Errorf("%s: cluster %d: pulse %d out of range", name, k, p)
		}
	}
	at := 0
	var h pixel.Hits
	for i := range entries {
		t0 := pixel.TimeFromNs(first[i])
		c.FirstToA, c.LastToA = append(c.FirstToA, t0), append(c.LastToA, t0+pixel.TimeFromNs(span[i]))
		c.Calibrated = calibrated[i]
		end := at + int(n[i])
		if n[i] < 0 || hitsX[i] != end || hitsY[i] != end || hitsToT[i] != end || hitsToA[i] != end || hitsE[i] != end {
			return nil, fmt.Errorf("%s: cluster %d: %d hits, vectors of other lengths", name, i, n[i])
		}
		h.Reset()
		h.E = nil
		for k := at; k < end; k++ {
			h.Append(hx[k], hy[k], pixel.TimeFromNs(htoa[k]), htot[k])
		}
		if c.Calibrated {
			h.E = he[at:end]
		}
		c.Members.AppendRange(&h, 0, h.Len())
		c.Start = append(c.Start, c.Members.Len())
		at = end
	}
	return c, nil
}

// vectorOf decodes vector entries of elements of size bytes into *dst,
// noting in *ends where each entry ends.
func vectorOf[T any](dst *[]T, ends *[]int, size int, conv func([]byte) T) func([]byte) {
	return func(b []byte) {
		for i := 0; i+size <= len(b); i += size {
			*dst = append(*dst, conv(b[i:i+size]))
		}
		*ends = append(*ends, len(*dst))
	}
}

// clueTypes are the branches of the clue tree after the points'
// coordinates (float64).
var clueTypes = map[string]branchType{
	"layer": {4, false}, "event": {4, false}, "weight": {8, false}, "rho": {8, false}, "delta": {8, false},
	"nh": {4, false}, "isSeed": {1, false}, "clusterId": {4, false},
}

// ReadCLUE reads the clue tree of a file written by [WriteCLUE].
func ReadCLUE(name string) (t *cluecsv.Table, res *clue.Result, err error) {
	defer damage.Recover(name, &err)
	r, err := open(name)
	if err != nil {
		return nil, nil, err
	}
	defer r.close()
	names, _, err := r.tree("clue")
	if err != nil {
		return nil, nil, err
	}
	t = &cluecsv.Table{}
	p := &t.Points
	res = &clue.Result{}
	read := map[string]func([]byte){
		"layer":     func(b []byte) { p.Layer = append(p.Layer, i32(b)) },
		"event":     func(b []byte) { p.Event = append(p.Event, i32(b)) },
		"weight":    func(b []byte) { p.Weight = append(p.Weight, f64(b)) },
		"rho":       func(b []byte) { res.Rho = append(res.Rho, f64(b)) },
		"delta":     func(b []byte) { res.Delta = append(res.Delta, f64(b)) },
		"nh":        func(b []byte) { res.NH = append(res.NH, i32(b)) },
		"isSeed":    func(b []byte) { res.IsSeed = append(res.IsSeed, b[0] != 0) },
		"clusterId": func(b []byte) { res.ClusterID = append(res.ClusterID, i32(b)) },
	}
	for _, b := range names {
		if b == "weight" {
			break
		}
		if b == "layer" || b == "event" {
			t.Layer, t.Event = t.Layer || b == "layer", t.Event || b == "event"
			continue
		}
		d := len(t.Coords)
		t.Coords = append(t.Coords, b)
		p.Coords = append(p.Coords, nil)
		read[b] = func(v []byte) { p.Coords[d] = append(p.Coords[d], f64(v)) }
	}
	types := func(b string) (branchType, bool) {
		if ty, ok := clueTypes[b]; ok {
			return ty, true
		}
		return branchType{8, false}, slices.Contains(t.Coords, b)
	}
	if _, err := r.columns("clue", types, read); err != nil {
		return nil, nil, err
	}
	for b := range clueTypes {
		if _, ok := r.baskets["clue"][b]; !ok && b != "layer" && b != "event" && len(names) > 0 {
			return nil, nil, fmt.Errorf("%s: the clue tree has no branch %s", name, b)
		}
	}
	res.Count()
	return t, res, nil
}
