// Package output writes hitflow's results in the formats analysis tools
// read. It depends on the domain packages (never the other way round) and
// is the only place that may pull in heavy I/O libraries.
//
// Pixel clusters ([ClusterWriter]):
//
//	.csv   one row per cluster: id,size,toa_ns,span_ns,tot_sum,energy_kev,
//	       x,y,xmin,xmax,ymin,ymax,max (energy_kev empty when uncalibrated;
//	       the centroid x,y and max use energy when calibrated, ToT otherwise)
//	.clog  ADVACAM cluster log: "Frame N (start_s, 0.000000 s)" and one line
//	       of "[x, y, value, toa_ns]" tuples per cluster, one frame per
//	       cluster (data-driven readout has no frames), value = energy in
//	       keV when calibrated, ToT otherwise
package output
