// Package jpet reconstructs images from a two-strip J-PET tomograph with
// list-mode MLEM and the analytic time-of-flight kernel of Białas et al.
// ("GPU Accelerated Image Reconstruction in a Two-Strip J-PET Tomograph",
// Acta Phys. Pol. A 127 (2015) 1500; the kernel in arXiv:1310.1614).
//
// Geometry: two scintillator strips of length L at y = +R and y = -R (R is
// the half distance); z runs along the strips. An event is the triple
// (z_u, z_d, dl): the hit positions on the upper and lower strip and the
// difference of path lengths. All lengths are in one unit (metres in the
// authors' files).
//
// The formulas follow the authors' public code (the paper's typeset
// equations for the kernel are garbled); see ../shared/reference/strip-pet.md.
//
// Images are row-major with row 0 at +y and columns along z, as the
// authors' NRRD files.
package jpet
