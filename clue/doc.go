// Package clue implements CLUE (CLUstering of Energy), the density-based
// clustering of weighted points of Rovere et al. (Front. Big Data 3:591315,
// 2020), with a fixed-grid spatial index so that the work is linear in the
// number of points, serially or on several workers with bit-identical
// results.
//
// # Semantics
//
// Points live on layers (an optional integer per point); points on
// different layers never interact. The distance d_ij is Euclidean over all
// coordinates, computed as sqrt of the sum of squared differences in
// dimension order, in float64. With the parameters of [Params]:
//
//   - density: rho_i = sum over j on the layer with d_ij <= dc of chi(d_ij) w_j,
//     the point itself included; chi is the [Kernel], whose exponential
//     is computed by the same steps on every platform and device (see
//     exp), so that the bits agree everywhere. The sum is the
//     correctly rounded value of the exact sum (accumulated in double-double
//     when the terms are not all exactly representable integers or halves),
//     so it does not depend on the order in which neighbours are met.
//   - j is higher than i when rho_j > rho_i, or rho_j == rho_i and j > i.
//   - nearest-higher nh_i: among the higher j with d_ij <= dm, where
//     dm = max(deltac, deltao), the one with the smallest d_ij; on an exact
//     tie the higher density, then the lower index. delta_i = d_i,nh; with
//     no such j, nh = -1 and delta = +Inf. The search order of the grid
//     therefore never matters.
//   - seed: delta > deltac and rho >= rhoc; outlier: delta > deltao and
//     rho < rhoc. Every other point follows its nearest-higher.
//   - cluster ids go to seeds in index order (0, 1, ...) and down the
//     follower chains; outliers and everything that follows them get -1.
//
// # Spatial index
//
// A fixed grid per layer: tiles of the tile size (by default dm, enlarged
// if the data's extent would need too many tiles) in every dimension but
// the first, along which they are up to four times narrower while the
// grid stays under six tiles per point; points sorted by (layer, tile,
// index) into contiguous runs. A search of radius r visits only the tiles
// touched by the box [x - r, x + r]; runs of tiles adjacent along
// dimension 0 are one contiguous slice, so the narrow tiles cut the strip
// a search reads at no cost in runs.
//
// # Parallelism
//
// Every step works point by point on disjoint outputs (index, density,
// nearest-higher, seeds and followers), so any number of workers gives
// the same bits. The expansion gives every follower the id of its tree's
// root, which does not depend on the order of the work: by path halving,
// on one worker in one pass and on several layer by layer (a follower's
// nearest-higher is in its layer, so no tree leaves it), or, when one
// layer holds most of the points, by pointer jumping in rounds that read
// one array and write another.
//
// # Vector build
//
// Built with GOEXPERIMENT=simd on amd64 with AVX2, the 2D scans of the
// density and of the nearest-higher search take four points at a time,
// with the same floating-point operations as the scalar code and so the
// same bits; the default build runs the scalar code.
package clue
