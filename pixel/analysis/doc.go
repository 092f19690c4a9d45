// Package analysis holds what physicists do with pixel clusters once
// they have them: the morphology of each cluster (pixels, inner pixels,
// roundness, linearity, length, width) and its class among the six
// classic ones (dots, small blobs, curly tracks, heavy blobs, heavy
// tracks, straight tracks), for particle identification and for keeping
// only the classes of interest while a run goes on; and the time of
// flight of each cluster from the reference pulses of a pulsed source,
// with the neutron energy and wavelength; the time walk of the hits,
// fitted from the clusters and corrected before clustering; and images
// of the clusters' centroids, super-resolved and by time of flight. The first
// two fill optional columns of pixel.Clusters that the cluster files
// carry. Algorithms and their small text files only: no timing.
package analysis
