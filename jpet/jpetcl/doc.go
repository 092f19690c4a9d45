// Package jpetcl runs the list-mode MLEM reconstruction of package jpet
// on an OpenCL device: the same events, kernels (analytic and Gaussian),
// pixel boxes and sensitivity, in double precision, one work-item per
// event, the image summed with atomic additions. Its tests run the CPU
// path and the device path on the same events and compare every pixel.
package jpetcl
