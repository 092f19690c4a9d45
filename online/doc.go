// Package online runs hitflow on live data: streams received from a
// readout over TCP, from a pipe or from a file still being written, held
// in a bounded buffer that spills to disk rather than lose a byte or make
// the readout wait; a simulated readout serving a stream in real time;
// outputs rotated into complete files during long runs; and the
// monitoring of a live run (a status line, Prometheus metrics, latency).
//
// A live stream is an io.Reader like a file, so the clustering pipeline
// takes it as it takes files, and the same bytes give the same clusters.
package online
