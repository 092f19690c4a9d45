package tpx3

import (
	"github.com/hitflow/hitflow/pixel"
)

// Reader is the common shape of the hit decoders.
type Reader interface {
	// Read replaces the contents of dst with the next batch of hits. At the
	// end of the input it returns io.EOF, possibly with a last batch. Any
	// other error comes with the hits decoded before it, and names the
	// file and the byte offset or line.
	Read(dst *pixel.Hits) error
	// Stats returns what has been decoded so far.
	Stats() Stats
}

// Stats counts what a reader decoded and what it skipped.
type Stats struct {
	Bytes      int64 // bytes consumed, for progress
	Hits       int64 // pixel hits delivered
	OutOfRange int64 // pixel hits outside the layout or sensor, not delivered
	TDC        int64 // TDC packets
	Control    int64 // global time, heartbeat, shutter, packet id, end of readout
	Unknown    int64 // packets of unknown type (raw) skipped
	Chunks     int64 // raw chunks
	Lines      int64 // text lines read
	Comments   int64 // comment and blank lines skipped
}

// DefaultBatch is the number of hits a raw reader's Read delivers unless
// told otherwise (see RawReader.SetBatch): small enough for a batch's
// hits, and the clusters made of them, to stay in the caches from one
// stage of a run to the next, and for the few batches in flight to take
// little fresh memory.
const DefaultBatch = 1 << 14
