// Package cluecl runs CLUE (package clue) on an OpenCL device, with the
// same results to the bit: the index, the densities, the nearest-higher
// points, the seeds and the clusters, each step one work-item per point.
// See Clusterer and docs/clue.md.
package cluecl
