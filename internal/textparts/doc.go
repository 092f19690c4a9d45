// Package textparts formats large batches of rows as text on several
// goroutines and writes the text in order, so that a file gets the same
// bytes as from one goroutine. The text writers of clusters (output) and
// of hits (pixel/tpx3) share it: formatting numbers as text costs more
// than the clustering that made them.
package textparts
