// Package pixel is the detector-agnostic core of hitflow's pixel-hit event
// building: the hit model, the three cluster definitions of Čelko et al.,
// a streaming sequential clusterer, two parallel ones that give exactly the
// same clusters ([Lanes], data lanes with temporal splitting, and
// [ChunkedClusterer], the chunked union-find), a bounded time-sorting stage
// and a comparison of two clusterings ([Compare]).
//
// Hits travel as structure-of-arrays batches ([Hits]); times are integer
// [Time] values in units of 1/64 ns, so every Timepix3 time stamp
// (a multiple of 1.5625 ns) is exact and time comparisons are exact.
//
// # Cluster definitions
//
// Two hits are spatial neighbours when their pixels are 8-neighbours or the
// same pixel. With dt = [Config].Dt, hits processed in time order
// (equal times in any order; the result does not depend on it):
//
//   - [Local] (default): a hit is connected to every neighbour hit whose time
//     differs by at most dt; clusters are the connected components. This is
//     the paper's "dynamic local-time neighbourhood".
//   - [Global]: a cluster is open while its latest hit is at most dt older
//     than the current hit. A hit joins (and merges) every open cluster that
//     has a hit on one of the nine pixels around it, whatever that hit's own
//     time. Every hit but the earliest therefore has a hit of its cluster at
//     most dt earlier ("dynamic global-time neighbourhood").
//   - [Window]: as Global, but a cluster is open while its FIRST hit is at
//     most dt older, so all pairs of hits in a cluster are within dt
//     ("static window").
//
// The literal set reading of the global definition (any spatially connected
// set without a time gap above dt, maximal) is not causal: on a long
// high-rate stream it joins the whole sensor into one cluster. The
// incremental reading above is what streaming clusterers implement, and the
// reference implementations in the tests follow the same text.
//
// # Streaming
//
// [Clusterer] keeps one reference per pixel (the index of the pixel's last
// hit) and a union-find forest whose root is the cluster's earliest hit.
// Given time-sorted hits, checking only the last hit of each of the nine
// pixels is exact for all three definitions: an older hit on the same pixel
// that could still connect is already in the same cluster as the last one.
// A cluster is emitted as soon as no later hit can join it and the ones
// before it are out, in the order of first ToA; one that spans more than
// [LongSpan] hits (a hot pixel firing faster than dt never ends) comes at
// its last hit instead, so that it holds back no more than that. Of such
// a cluster the buffer keeps only the hits later ones can reach, and the
// sums of the others (exact: the features do not change). Memory is
// therefore bounded whatever the stream. When the members are kept, all
// hits of such a cluster are, and the streams report a [MemberLimitError]
// once they hold more than Config.MemberLimit hits: the caller stops
// there.
//
// A hit more than dt after every earlier hit starts afresh: under every
// definition nothing before it can be joined any more. A run of hits
// between two such gaps (an isolated group: one particle, or a few, of a
// source that is not piled up) is therefore clustered on its own: a short
// one by pairwise tests on its few hits, without the matrix, a longer one
// (a track, an ion) on the matrix but without the buffer of open
// clusters. Streams without such gaps go through the buffer. All give the
// same clusters, and the tests check it.
//
// Readouts deliver hits only approximately time-ordered; [Sorter] restores
// the order within a bounded window. A hit arriving later than the window
// allows is "late": it is counted and still clustered with the clusters that
// are open, comparing absolute time differences (see [Clusterer.Add]). A
// hit more than Config.Restart earlier than the latest is a clock reset:
// every mode finishes all clusters there and goes on as if the stream began
// with that hit (see [Stats.Restarts]).
//
// # Hot pixels
//
// A [Mask] drops the hits of chosen pixels before clustering (the caller
// counts them); [HitCounts] is the hit map from which hot and noisy
// pixels are found: those far above the median of the pixels that fired.
//
// # Features
//
// Every feature sum is exact (integers for ToT, 128-bit fixed point for
// energies), so features do not depend on the order in which a cluster's
// hits were joined: all modes give the same bits.
//
// A stream is calibrated (its hits carry energies) from its first batch
// or not at all, as the command line's runs are. When energies start
// midway, the hits before count as zero energy, and the clusters a
// clusterer finished before the first calibrated batch keep features from
// the ToT: which clusters those are depends on the mode's buffering.
package pixel
