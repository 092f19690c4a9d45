// Package pipeline runs pixel event building end to end: decode hit files,
// calibrate, restore time order, cluster and hand the clusters (and
// optionally the labelled hits) to writers, counting everything that is
// skipped on the way.
package pipeline
