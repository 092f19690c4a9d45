// Package pipeline runs pixel event building end to end: decode hit files,
// drop the hits of masked pixels, calibrate, restore time order, cluster
// and hand the clusters (and optionally the labelled hits) to writers,
// counting everything that is skipped on the way ([Run]). [Scan] reads
// the hits alone, for a look at them such as a hit map.
package pipeline
