// Package opencl runs hitflow's kernels on OpenCL devices, loading the
// OpenCL library at run time (no cgo): a binary built anywhere runs
// everywhere, and only a command that asks for a device needs an OpenCL
// driver.
//
//	platforms, err := opencl.Platforms()      // every platform and device
//	dev, err := opencl.Select("opencl")        // the first GPU, else the first device
//	ctx, err := dev.Open()                     // a context and an in-order queue
//	defer ctx.Close()
//	prog, err := ctx.Build(source, "-cl-std=CL1.2")  // or the cached binary
//	k, err := prog.Kernel("scale")
//	buf, err := ctx.NewBuffer(4*n, opencl.ReadWrite)
//	err = opencl.Write(buf, 0, values)
//	err = k.SetArgs(buf, float32(2), int32(n))
//	took, err := k.Run([]int{n}, nil)          // the device's time, from its profiling
//	err = opencl.Read(buf, 0, values)
//
// The library is libOpenCL.so.1, the ICD loader, which finds the vendors'
// drivers; HITFLOW_OPENCL_LIBRARY names another. Errors name the failed
// call and its code (CL_OUT_OF_RESOURCES ...); a program that does not
// compile returns a [BuildError] with the compiler's log. Compiled
// programs are kept in [CacheDir], keyed by source, options, device and
// driver, so that a second run starts at once. Every object is released
// by its Release or Close, and [Live] counts those that are not, for
// tests.
package opencl
