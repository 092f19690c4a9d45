// Package pixelcl runs the chunk step of pixel's chunked union-find
// (Čelko et al., algorithm 2) on an OpenCL device: a work-item a chunk,
// each with a sensor-sized matrix of its chunk's last hit per pixel (16
// bits an entry, as the paper's, where the chunks allow), and then the
// sums of the chunk's closed clusters. The clusterer
// (pixel.ChunkedClusterer) does the rest on the host, so the clusters are
// the sequential clusterer's, bit for bit. Its Sorter does the reorder
// stage's radix sorts (pixel.Sorter) on the device, checked by the host.
// See Labeler, Sorter and docs/clustering.md.
package pixelcl
