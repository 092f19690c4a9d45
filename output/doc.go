// Package output writes hitflow's results in the formats analysis tools
// read, reads them back, and draws figures. It depends on the domain
// packages (never the other way round) and is the only place that pulls
// in the heavy I/O libraries (arrow-go for Parquet and Arrow IPC, go-hep
// for ROOT and plots).
//
// Pixel clusters ([CreateClusters], [ReadClusters]), by extension:
//
//	.csv      one row per cluster: id,size,toa_ns,span_ns,tot_sum,energy_kev,
//	          x,y,xmin,xmax,ymin,ymax,max (energy_kev empty when uncalibrated;
//	          the centroid x,y and max use energy when calibrated, ToT otherwise)
//	.clog     ADVACAM cluster log: "Frame N (start_s, 0.000000 s)" and one line
//	          of "[x, y, value, toa_ns]" tuples per cluster, one frame per
//	          cluster (data-driven readout has no frames), value = energy in
//	          keV when calibrated, ToT otherwise (written only)
//	.parquet  the CSV columns ([ClusterParquetFields]), energy_kev null when
//	          uncalibrated
//	.arrow    the same columns as an Arrow IPC file (Feather v2), uncompressed:
//	          the fastest to write; pyarrow, polars and pandas read it
//	          (written only: see [ReadClusters])
//	.root     a TTree "clusters": the features as scalar branches (centroid
//	          cx, cy; plus calibrated and n) and the hits as std::vector
//	          branches x y toa tot e
//
// Per-hit labels ([CreateHits], [ReadHits]): .csv, .parquet or .arrow. CLUE
// results ([WriteCLUE], [ReadCLUE]): .csv, .parquet, .arrow or .root (TTree
// "clue"). Arrow files are written, not read back. J-PET events: [WriteEventsParquet], [ReadEventsParquet]. Every
// writer streams: memory does not grow with the file. Readers return
// errors naming the file for damaged input, never a library panic. ROOT
// files are read in a child process, the same executable started again,
// because a damaged one can crash groot beyond recovery (see rootReply).
package output
