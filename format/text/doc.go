// Package text writes pixel clusters as text and reads hitflow's text
// results back:
//
//	ClusterCSV  one row per cluster, the header [ClusterCSVHeader]; the
//	            floating-point columns to [CSVDecimals] decimals
//	CLog        ADVACAM's cluster log: a "Frame N (start_s, 0.000000 s)"
//	            line and one line of "[x, y, value, toa_ns]" tuples per
//	            cluster; value is the energy in keV when calibrated, the
//	            ToT otherwise
//
// [ReadClusters] reads the cluster CSV back and [ReadCLUE] a CLUE result
// written by clue/cluecsv; errors name the file and line. Large batches
// are formatted on all cores, in parts that are written in order.
package text
