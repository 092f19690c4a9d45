package output

import (
	"fmt"

	"go-hep.org/x/hep/groot"
	"go-hep.org/x/hep/groot/rdict"
	"go-hep.org/x/hep/groot/riofs"
	"go-hep.org/x/hep/groot/rtree"

	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/pixel"
)

// rootBasket is the basket size of the trees hitflow writes. groot makes a
// new zstd encoder, with its history buffers, for every basket; at its 32
// KiB default that allocation took half of the writing time.
const rootBasket = 1 << 20

// createROOT creates a ROOT file carrying the TLeaf streamer.
//
// groot writes the streamers of the objects it stores and their static
// dependencies: TTree, TBranch, TObjArray and so on, but not TLeaf, as the
// leaves hang off a TObjArray. ROOT itself does not need it (its
// dictionaries know the class), but readers that build their models from
// the file's streamer list, JSROOT among them, then misread the leaf count
// of variable-length branches. File.RegisterStreamer adds a streamer only
// while the file's list is empty (afterwards it takes any class the
// library knows as present, even one this file lacks), so TLeaf, the class
// that holds the count reference, is registered first; the concrete leaf
// classes (TLeafI, TLeafD ...) cannot be added through groot v0.40.0's API.
// For the same reason the std::vector streamers of the hit branches appear
// only in the first file a process writes. Neither ROOT nor uproot is
// installed where this was written: the files are checked with groot's
// reader only.
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
	si, err := rdict.StreamerInfos.StreamerInfo("TLeaf", -1)
	if err != nil {
		f.Close()
		out.Abort()
		return nil, nil, fmt.Errorf("%s: no streamer for TLeaf: %w", name, err)
	}
	f.RegisterStreamer(si)
	return f, out, nil
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
}

func (e *clusterEntry) vars() []rtree.WriteVar {
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

// ClusterROOT writes a TTree "clusters" with one entry per cluster: the
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
type ClusterROOT struct {
	f   *riofs.File
	out *outfile.File
	t   rtree.Writer
	ev  clusterEntry
}

// CreateClusterROOT creates the named ROOT file.
func CreateClusterROOT(name string) (*ClusterROOT, error) {
	f, out, err := createROOT(name)
	if err != nil {
		return nil, err
	}
	c := &ClusterROOT{f: f, out: out}
	c.t, err = rtree.NewWriter(f, "clusters", c.ev.vars(), rtree.WithZstd(1), rtree.WithBasketSize(rootBasket), rtree.WithTitle("hitflow pixel clusters"))
	if err != nil {
		f.Close()
		out.Abort()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

func (c *ClusterROOT) NeedsMembers() bool { return true }

func (c *ClusterROOT) Write(cl *pixel.Clusters) error {
	if !cl.HasMembers() {
		return fmt.Errorf("root: %w", pixel.ErrNoMembers)
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
		if _, err := c.t.Write(); err != nil {
			return fmt.Errorf("%s: %w", c.out.Name(), err)
		}
	}
	return nil
}

// Close writes the tree, closes the file and puts it in place.
func (c *ClusterROOT) Close() error { return closeROOT(c.f, c.out, c.t.Close()) }

// Abort closes the file and removes it; the name keeps its old file.
func (c *ClusterROOT) Abort() {
	c.f.Close()
	c.out.Abort()
}

// readClusterROOT reads the clusters tree back, hits as Members.
func readClusterROOT(name string) (*pixel.Clusters, error) {
	f, err := groot.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	defer f.Close()
	obj, err := f.Get("clusters")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tree, ok := obj.(rtree.Tree)
	if !ok {
		return nil, fmt.Errorf("%s: clusters is a %s, not a TTree", name, obj.Class())
	}
	var e clusterEntry
	var rvars []rtree.ReadVar
	for _, v := range e.vars() {
		rvars = append(rvars, rtree.ReadVar{Name: v.Name, Value: v.Value})
	}
	r, err := rtree.NewReader(tree, rvars)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer r.Close()
	c := &pixel.Clusters{}
	c.Reset()
	err = r.Read(func(rtree.RCtx) error {
		first := pixel.TimeFromNs(e.ToA)
		c.ID, c.Size = append(c.ID, e.ID), append(c.Size, e.Size)
		c.FirstToA, c.LastToA = append(c.FirstToA, first), append(c.LastToA, first+pixel.TimeFromNs(e.Span))
		c.ToTSum, c.ESum, c.Calibrated = append(c.ToTSum, e.ToTSum), append(c.ESum, e.Energy), e.Calibrated
		c.X, c.Y, c.Max = append(c.X, e.CX), append(c.Y, e.CY), append(c.Max, e.Max)
		c.XMin, c.XMax = append(c.XMin, e.XMin), append(c.XMax, e.XMax)
		c.YMin, c.YMax = append(c.YMin, e.YMin), append(c.YMax, e.YMax)
		var h pixel.Hits
		for k := range int(e.N) {
			h.Append(e.X[k], e.Y[k], pixel.TimeFromNs(e.HitToA[k]), e.ToT[k])
		}
		if e.Calibrated {
			h.E = e.E
		}
		c.Members.AppendRange(&h, 0, h.Len())
		c.Start = append(c.Start, c.Members.Len())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}
