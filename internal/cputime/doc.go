// Package cputime tells the CPU time the process has used: how busy its
// cores were over a stretch of wall time, which says whether a run was
// bound by computing or waited (auto mode's choice of clusterer, the
// end-to-end benchmark).
package cputime
