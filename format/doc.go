// Package format reads and writes hitflow's results by file name: the
// extension picks the format, here and nowhere else. The formats
// themselves live in one package per family: [text] (CSV and ADVACAM's
// cluster log), [columnar] (Apache Parquet and Arrow IPC) and [root]
// (CERN ROOT TTrees).
//
//	cw, err := format.CreateClusters("run.parquet", os.Stdout)
//	...
//	err = cw.Write(clusters) // every batch the clusterer gives
//	...
//	err = cw.Close()         // the file appears under its name only now
//
// Pixel clusters ([CreateClusters], [ReadClusters]):
//
//	.csv      one row per cluster: id,size,toa_ns,span_ns,tot_sum,energy_kev,
//	          x,y,xmin,xmax,ymin,ymax,max (energy_kev empty when uncalibrated;
//	          the centroid x,y and max use energy when calibrated, ToT otherwise)
//	.clog     ADVACAM cluster log (written only)
//	.parquet  the CSV's columns, energy_kev null when uncalibrated
//	.arrow    the same columns as an Arrow IPC file (Feather v2), for pyarrow,
//	          polars and pandas; read back as a file or a stream (-.arrow)
//	.root     a TTree "clusters": the features as scalar branches and the
//	          hits as std::vector branches x y toa tot e
//
// Per-hit labels ([CreateHits], [ReadHits]): .csv, .parquet or .arrow.
// CLUE results ([WriteCLUE], [ReadCLUE]): .csv, .parquet, .arrow or .root
// (TTree "clue"). [Kind] tells clusters from CLUE results and images.
//
// Every output is written to a temporary file beside its name and renamed
// when closed, so that a failed or killed run never leaves a partial file
// under the name; "-" is standard output and os.DevNull writes nothing.
// Every writer streams: memory does not grow with the file. Readers
// return errors naming the file for damaged input, never a library panic.
package format
