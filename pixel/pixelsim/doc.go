// Package pixelsim generates synthetic Timepix3 hit streams that mimic the
// datasets of Čelko et al. (gamma rays from Am-241, 40 GeV/c pions at 0, 45
// and 75 degrees, Pb ions at 0, 50 and 90 degrees and their large-cluster
// subsets), seeded and reproducible, at a chosen hit rate and with a chosen
// disorder of the readout.
//
// A dataset is a recipe for one cluster: a shape (charge-sharing blob,
// straight track with delta rays, heavy-ion "volcano" with a halo), a ToT
// per pixel and a time per hit (a common arrival time plus a time walk that
// grows as the ToT falls). Clusters arrive as a Poisson process at a rate
// that gives the requested hits per second, at uniform positions, so
// pile-up at high rates is real. The model is tuned to the paper's mean
// cluster sizes (see [Datasets]); it is not a detector simulation.
package pixelsim
