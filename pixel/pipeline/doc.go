// Package pipeline runs pixel event building end to end: decode hit files,
// drop the hits of masked pixels, calibrate, restore time order, cluster
// and hand the clusters (and optionally the labelled hits) to writers,
// counting everything that is skipped on the way ([Run]). [Scan] reads
// the hits alone, for a look at them such as a hit map.
//
// The stages run concurrently, joined by bounded queues of recycled
// batches; a cancelled or failed run still clusters and writes what it
// read, and leaves no goroutine behind.
//
// It is also where timing policy lives: [NewStream] makes the clusterer of
// a mode, and for pixel.Auto one that times the sequential clusterer and
// lanes on the stream itself and keeps the faster (see [Chosen]); the
// algorithms of package pixel know no clock.
package pipeline
