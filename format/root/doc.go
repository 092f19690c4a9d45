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
// for every branch. Reading is slow (groot decodes entry by entry, about
// a million hits a second); Parquet is the fast format.
//
// ROOT files are read in a child process, the same executable started
// again, because a damaged file can crash groot beyond recovery.
package root
