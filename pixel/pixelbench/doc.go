// Package pixelbench reproduces the clustering benchmark of Čelko et al.:
// the hits are loaded into memory first; then the clock runs while the set
// is repeated with a ToA offset (25 times in the paper) and clustered, and
// each measurement is repeated (5 times) and reported by its median.
package pixelbench
