// Package plot draws hitflow's figures, as PNG or SVG, for every domain:
//
//	pixel clusters  ClusterSize, ClusterSpectrum, ClusterTime, ClusterMap
//	                (WriteClusterFigures writes the four), ClusterHits
//	                (the hits of one cluster), HitMap (hits per pixel with
//	                the hot pixels circled)
//	CLUE            CLUE: points on two coordinates, coloured by cluster
//	J-PET           Image: a reconstructed or simulated image
//	benchmarks      Scaling: rate against workers per mode and dataset
//
// Histograms are [Width] wide. Maps and images are sized for square
// pixels (a sensor's, an image's bins), their cells drawn with sharp
// edges, not smoothed. Every figure writes to an io.Writer, except
// WriteClusterFigures, which names its files after a prefix. It draws
// with gonum/plot through go-hep's hplot.
package plot
