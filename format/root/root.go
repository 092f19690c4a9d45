package root

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"go-hep.org/x/hep/groot"
	"go-hep.org/x/hep/groot/rbytes"
	"go-hep.org/x/hep/groot/rdict"
	"go-hep.org/x/hep/groot/riofs"
	"go-hep.org/x/hep/groot/rtree"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

// rootBasket is the basket size of the trees hitflow writes. groot makes a
// new zstd encoder, with its history buffers, for every basket; at its 32
// KiB default that allocation took half of the writing time.
const rootBasket = 1 << 20

// createROOT creates a ROOT file for one tree (see [completeStreamers]).
//
// groot opens the file by its path, so it writes to the temporary file of
// [outfile.CreatePath]; [closeROOT] puts it in place.
func createROOT(name string) (*riofs.File, *outfile.File, error) {
	out, err := outfile.CreatePath(name)
	if err != nil {
		return nil, nil, err
	}
	f, err := groot.Create(out.Path())
	if err != nil {
		out.Abort()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, out, nil
}

// treeStreamers are the classes of the trees hitflow writes whose
// streamer records groot leaves out: the leaves and the branches of
// std::vector columns, and the vectors themselves.
var treeStreamers = []string{"TLeaf", "TLeafO", "TLeafS", "TLeafI", "TLeafL", "TLeafF", "TLeafD",
	"TLeafElement", "TBranchElement", "vector<uint16_t>", "vector<float>", "vector<double>"}

// completeStreamers adds to f's list of streamer records those of
// treeStreamers, once the tree's writer has made its branches.
//
// groot writes the records of the objects it stores and of their static
// dependencies: TTree, TBranch, TObjArray and so on, but not those of the
// leaves and std::vector branches, which hang off a TObjArray. ROOT itself
// does not need them (its dictionaries know the classes), but readers that
// build their models from the file's list do: JSROOT cannot read such a
// file's vector branches at all. groot v0.40.0's File.RegisterStreamer
// adds a record only while the list is empty (afterwards it takes any
// class the library knows for present, even one the file lacks), so the
// records go into the list directly; TestROOTStreamers fails if groot's
// File changes shape.
func completeStreamers(f *riofs.File) error {
	v := reflect.ValueOf(f).Elem()
	list, set := v.FieldByName("sinfos"), v.FieldByName("simap")
	if list.Type() != reflect.TypeFor[[]rbytes.StreamerInfo]() || set.Type() != reflect.TypeFor[map[rbytes.StreamerInfo]struct{}]() {
		return fmt.Errorf("groot's riofs.File has no streamer list of the expected shape")
	}
	sinfos := (*[]rbytes.StreamerInfo)(unsafe.Pointer(list.UnsafeAddr()))
	simap := *(*map[rbytes.StreamerInfo]struct{})(unsafe.Pointer(set.UnsafeAddr()))
	for _, name := range treeStreamers {
		si, ok := rdict.StreamerInfos.Get(name, -1)
		if !ok {
			continue // a vector type no branch of this tree made
		}
		if _, dup := simap[si]; !dup && !slices.ContainsFunc(*sinfos, func(s rbytes.StreamerInfo) bool { return s.Name() == name }) {
			simap[si] = struct{}{}
			*sinfos = append(*sinfos, si)
		}
	}
	return nil
}

// closeROOT closes a file of createROOT after its tree was closed with
// err, and puts it in place if all went well.
func closeROOT(f *riofs.File, out *outfile.File, err error) error {
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		out.Abort()
		return fmt.Errorf("%s: %w", out.Name(), err)
	}
	return out.Close()
}

// clusterEntry is one entry of the clusters tree.
type clusterEntry struct {
	ID         int64
	Size       int32
	ToA, Span  float64
	ToTSum     int64
	Energy     float64
	Calibrated bool
	CX, CY     float64
	XMin, XMax uint16
	YMin, YMax uint16
	Max        float64
	N          int32
	X, Y       []uint16
	HitToA     []float64
	ToT        []uint16
	E          []float32

	// Optional (see Columns).
	Pixels, Inner                       int32
	Roundness, Linearity, Length, Width float64
	Class                               int32 // an int: the streamers hitflow completes cover no 8-bit leaf
	TOF                                 float64
	Pulse                               int64
	EnergyEV, Wavelength                float64
}

// Columns choose the optional branches of the clusters tree.
type Columns struct {
	// Shapes adds the morphology (pixel.Clusters.HasShapes): pixels,
	// inner, roundness, linearity, length, width and class, the class's
	// number in analysis.Classes (0 dot, 1 small_blob, 2 curly_track,
	// 3 heavy_blob, 4 heavy_track, 5 straight_track).
	Shapes bool
	// TOF adds the time of flight (pixel.Clusters.HasTOF): tof_ns and
	// pulse, -1 (and tof_ns 0) before the first pulse; with a positive
	// FlightPath in metres, energy_ev and wavelength_a (0 without a time
	// of flight).
	TOF        bool
	FlightPath float64
}

func (e *clusterEntry) vars(cols Columns) []rtree.WriteVar {
	vs := e.baseVars()
	if cols.Shapes {
		vs = append(vs, rtree.WriteVar{Name: "pixels", Value: &e.Pixels}, rtree.WriteVar{Name: "inner", Value: &e.Inner},
			rtree.WriteVar{Name: "roundness", Value: &e.Roundness}, rtree.WriteVar{Name: "linearity", Value: &e.Linearity},
			rtree.WriteVar{Name: "length", Value: &e.Length}, rtree.WriteVar{Name: "width", Value: &e.Width},
			rtree.WriteVar{Name: "class", Value: &e.Class})
	}
	if cols.TOF {
		vs = append(vs, rtree.WriteVar{Name: "tof_ns", Value: &e.TOF}, rtree.WriteVar{Name: "pulse", Value: &e.Pulse})
		if cols.FlightPath > 0 {
			vs = append(vs, rtree.WriteVar{Name: "energy_ev", Value: &e.EnergyEV}, rtree.WriteVar{Name: "wavelength_a", Value: &e.Wavelength})
		}
	}
	return vs
}

func (e *clusterEntry) baseVars() []rtree.WriteVar {
	return []rtree.WriteVar{
		{Name: "id", Value: &e.ID}, {Name: "size", Value: &e.Size},
		{Name: "toa_ns", Value: &e.ToA}, {Name: "span_ns", Value: &e.Span},
		{Name: "tot_sum", Value: &e.ToTSum}, {Name: "energy_kev", Value: &e.Energy},
		{Name: "calibrated", Value: &e.Calibrated},
		{Name: "cx", Value: &e.CX}, {Name: "cy", Value: &e.CY},
		{Name: "xmin", Value: &e.XMin}, {Name: "xmax", Value: &e.XMax},
		{Name: "ymin", Value: &e.YMin}, {Name: "ymax", Value: &e.YMax},
		{Name: "max", Value: &e.Max},
		{Name: "n", Value: &e.N},
		{Name: "x", Value: &e.X}, {Name: "y", Value: &e.Y},
		{Name: "toa", Value: &e.HitToA}, {Name: "tot", Value: &e.ToT},
		{Name: "e", Value: &e.E},
	}
}

// ClusterTree writes a TTree "clusters" with one entry per cluster: the
// features as scalar branches (the CSV columns, the centroid as cx, cy,
// calibrated, and the hit count n) and the hits as std::vector branches
// x, y (uint16), toa (ns, double), tot (uint16), e (keV, float, 0 when
// uncalibrated); zstd compressed, written basket by basket as the clusters
// come.
//
// The hits are vectors, not leaf-list arrays x[n]: groot v0.40.0 crashes
// writing an array branch once a basket holds an entry of more than 1000
// bytes followed by 1000 more entries (a cluster of 126 hits among small
// ones is enough; see TestROOTBigThenSmall), while its vector writer grows
// the offset table correctly.
type ClusterTree struct {
	f    *riofs.File
	out  *outfile.File
	t    rtree.Writer
	ev   clusterEntry
	cols Columns
}

// CreateClusters creates the named ROOT file, with the optional branches
// chosen.
func CreateClusters(name string, cols Columns) (*ClusterTree, error) {
	f, out, err := createROOT(name)
	if err != nil {
		return nil, err
	}
	c := &ClusterTree{f: f, out: out, cols: cols}
	c.t, err = rtree.NewWriter(f, "clusters", c.ev.vars(cols), rtree.WithZstd(1), rtree.WithBasketSize(rootBasket), rtree.WithTitle("hitflow pixel clusters"))
	if err == nil {
		err = completeStreamers(f)
	}
	if err != nil {
		f.Close()
		out.Abort()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

func (c *ClusterTree) NeedsMembers() bool { return true }

// Size is the number of bytes in the file so far (the baskets written).
func (c *ClusterTree) Size() int64 { return c.out.Size() }

func (c *ClusterTree) Write(cl *pixel.Clusters) error {
	if !cl.HasMembers() {
		return fmt.Errorf("root: %w", pixel.ErrNoMembers)
	}
	if c.cols.Shapes && !cl.HasShapes() || c.cols.TOF && !cl.HasTOF() {
		return fmt.Errorf("root: the clusters carry no morphology or time-of-flight columns (see pixel/analysis)")
	}
	e := &c.ev
	m := &cl.Members
	for i := range cl.Len() {
		e.ID, e.Size, e.ToA, e.Span = cl.ID[i], cl.Size[i], cl.FirstToA[i].Ns(), (cl.LastToA[i] - cl.FirstToA[i]).Ns()
		e.ToTSum, e.Energy, e.Calibrated = cl.ToTSum[i], cl.ESum[i], cl.Calibrated
		e.CX, e.CY, e.Max = cl.X[i], cl.Y[i], cl.Max[i]
		e.XMin, e.XMax, e.YMin, e.YMax = cl.XMin[i], cl.XMax[i], cl.YMin[i], cl.YMax[i]
		from, to := cl.Start[i], cl.Start[i+1]
		e.N = int32(to - from)
		e.X, e.Y, e.ToT = m.X[from:to], m.Y[from:to], m.ToT[from:to]
		e.HitToA = e.HitToA[:0]
		for _, t := range m.ToA[from:to] {
			e.HitToA = append(e.HitToA, t.Ns())
		}
		e.E = e.E[:0]
		if m.Calibrated() {
			e.E = append(e.E, m.E[from:to]...)
		} else {
			e.E = append(e.E, make([]float32, to-from)...)
		}
		if c.cols.Shapes {
			e.Pixels, e.Inner, e.Class = cl.Pixels[i], cl.Inner[i], int32(cl.Class[i])
			e.Roundness, e.Linearity, e.Length, e.Width = cl.Roundness[i], cl.Linearity[i], cl.Length[i], cl.Width[i]
		}
		if c.cols.TOF {
			e.TOF, e.Pulse = cl.TOF[i].Ns(), cl.Pulse[i]
			e.EnergyEV, e.Wavelength, _ = analysis.Neutron(cl.TOF[i], cl.Pulse[i], c.cols.FlightPath)
		}
		if _, err := c.t.Write(); err != nil {
			return fmt.Errorf("%s: %w", c.out.Name(), err)
		}
	}
	return nil
}

// Close writes the tree, closes the file and puts it in place.
func (c *ClusterTree) Close() error { return closeROOT(c.f, c.out, c.t.Close()) }

// Abort closes the file and removes it; the name keeps its old file.
func (c *ClusterTree) Abort() {
	c.f.Close()
	c.out.Abort()
}
