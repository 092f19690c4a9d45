// Package columnar writes hitflow's tables as Apache Parquet and Arrow IPC
// files with arrow-go, and reads them back.
//
//	clusters  ClusterFields: NewClusterParquet, NewClusterArrow, ReadClusters
//	hits      HitFields (one row per hit with its cluster id): NewHitParquet,
//	          NewHitArrow, ReadHits
//	CLUE      the coordinates, layer, weight and result columns:
//	          WriteCLUEParquet, WriteCLUEArrow, ReadCLUE
//	J-PET     EventFields (z_u, z_d, dl as float32): WriteEvents, ReadEvents
//
// Parquet files are Snappy-compressed in row groups of 65,536 rows, the
// columns of a row group encoded in parallel; Arrow files are
// uncompressed, the fastest to write. Arrow IPC files and streams are read
// back by a reader of this package's own (ipc.go), not arrow-go's, which
// trusts the counts in a file, so that a damaged one can make it allocate
// without bound. A table from elsewhere converts with ClustersFromTable,
// HitsFromTable and CLUEFromTable.
package columnar
