// Package root writes hitflow's results as CERN ROOT files with go-hep's
// groot, and reads them back.
//
//	clusters  TTree "clusters", one entry per cluster: the features as
//	          scalar branches (centroid cx, cy; calibrated and n) and the
//	          hits as std::vector branches x y toa tot e (CreateClusters,
//	          ReadClusters)
//	CLUE      TTree "clue", one entry per point (WriteCLUE, ReadCLUE)
//
// The files carry the streamer records that ROOT, uproot and JSROOT need
// for every branch. They are written with groot and read back by a reader
// of this package's own, for the trees hitflow writes: groot's reader
// decodes baskets on goroutines where a panic on a damaged file cannot be
// recovered, and sizes allocations by counts in the file. This one walks
// the file's records, checks every size against the record that holds it
// before allocating, and decodes the branches by their known types; a
// damaged file is an error naming the byte where it went wrong.
package root
