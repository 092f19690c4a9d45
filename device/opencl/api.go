package opencl

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libraryEnv names the OpenCL library to load instead of the ICD loader
// the system finds (a full path, or another soname).
const libraryEnv = "HITFLOW_OPENCL_LIBRARY"

// defaultLibrary is the ICD loader: it finds the vendors' drivers (the
// files in /etc/OpenCL/vendors, or OCL_ICD_VENDORS).
const defaultLibrary = "libOpenCL.so.1"

// api holds the OpenCL entry points, loaded on first use.
type api struct {
	getPlatformIDs      func(n uint32, ids *uintptr, count *uint32) int32
	getPlatformInfo     func(p uintptr, param uint32, size uintptr, value unsafe.Pointer, ret *uintptr) int32
	getDeviceIDs        func(p uintptr, typ uint64, n uint32, ids *uintptr, count *uint32) int32
	getDeviceInfo       func(d uintptr, param uint32, size uintptr, value unsafe.Pointer, ret *uintptr) int32
	createContext       func(props unsafe.Pointer, n uint32, devs *uintptr, notify, user uintptr, err *int32) uintptr
	createQueue         func(ctx, dev uintptr, props uint64, err *int32) uintptr
	createQueueWithProp func(ctx, dev uintptr, props *uint64, err *int32) uintptr
	createProgramSource func(ctx uintptr, n uint32, src *unsafe.Pointer, lengths *uintptr, err *int32) uintptr
	createProgramBinary func(ctx uintptr, n uint32, devs *uintptr, lengths *uintptr, bins *unsafe.Pointer, status *int32, err *int32) uintptr
	buildProgram        func(p uintptr, n uint32, devs *uintptr, options string, notify, user uintptr) int32
	getProgramBuildInfo func(p, dev uintptr, param uint32, size uintptr, value unsafe.Pointer, ret *uintptr) int32
	getProgramInfo      func(p uintptr, param uint32, size uintptr, value unsafe.Pointer, ret *uintptr) int32
	createKernel        func(p uintptr, name string, err *int32) uintptr
	setKernelArg        func(k uintptr, index uint32, size uintptr, value unsafe.Pointer) int32
	getKernelGroupInfo  func(k, dev uintptr, param uint32, size uintptr, value unsafe.Pointer, ret *uintptr) int32
	createBuffer        func(ctx uintptr, flags uint64, size uintptr, host unsafe.Pointer, err *int32) uintptr
	enqueueWrite        func(q, mem uintptr, blocking uint32, offset, size uintptr, ptr unsafe.Pointer, n uint32, wait *uintptr, ev *uintptr) int32
	enqueueRead         func(q, mem uintptr, blocking uint32, offset, size uintptr, ptr unsafe.Pointer, n uint32, wait *uintptr, ev *uintptr) int32
	enqueueFill         func(q, mem uintptr, pattern unsafe.Pointer, patternSize, offset, size uintptr, n uint32, wait *uintptr, ev *uintptr) int32
	enqueueMap          func(q, mem uintptr, blocking uint32, flags uint64, offset, size uintptr, n uint32, wait *uintptr, ev *uintptr, err *int32) unsafe.Pointer
	enqueueUnmap        func(q, mem uintptr, ptr unsafe.Pointer, n uint32, wait *uintptr, ev *uintptr) int32
	enqueueNDRange      func(q, k uintptr, dim uint32, offset, global, local *uintptr, n uint32, wait *uintptr, ev *uintptr) int32
	finish              func(q uintptr) int32
	waitForEvents       func(n uint32, evs *uintptr) int32
	getProfilingInfo    func(ev uintptr, param uint32, size uintptr, value unsafe.Pointer, ret *uintptr) int32
	releaseEvent        func(ev uintptr) int32
	releaseMem          func(mem uintptr) int32
	releaseKernel       func(k uintptr) int32
	releaseProgram      func(p uintptr) int32
	releaseQueue        func(q uintptr) int32
	releaseContext      func(ctx uintptr) int32
}

var (
	loadOnce sync.Once
	loaded   *api
	loadErr  error
)

// lib returns the OpenCL entry points, loading the library the first time
// a caller asks for a device; nothing is loaded before.
func lib() (*api, error) {
	loadOnce.Do(func() {
		name := defaultLibrary
		if n := os.Getenv(libraryEnv); n != "" {
			name = n
		}
		loaded, loadErr = load(name)
	})
	return loaded, loadErr
}

// load opens the library name and finds its entry points.
func load(name string) (a *api, err error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("opencl: cannot load %s (%v): install an OpenCL driver (your GPU vendor's, or the packages ocl-icd-libopencl1 and pocl-opencl-icd to run on the CPU)", name, err)
	}
	// RegisterLibFunc panics on a missing symbol: an OpenCL older than
	// 1.2, or not an OpenCL library at all.
	defer func() {
		if r := recover(); r != nil {
			a, err = nil, fmt.Errorf("opencl: %s is not an OpenCL 1.2 library: %v", name, r)
		}
	}()
	a = &api{}
	for _, f := range []struct {
		fn   any
		name string
	}{
		{&a.getPlatformIDs, "clGetPlatformIDs"}, {&a.getPlatformInfo, "clGetPlatformInfo"},
		{&a.getDeviceIDs, "clGetDeviceIDs"}, {&a.getDeviceInfo, "clGetDeviceInfo"},
		{&a.createContext, "clCreateContext"}, {&a.createQueue, "clCreateCommandQueue"},
		{&a.createProgramSource, "clCreateProgramWithSource"}, {&a.createProgramBinary, "clCreateProgramWithBinary"},
		{&a.buildProgram, "clBuildProgram"}, {&a.getProgramBuildInfo, "clGetProgramBuildInfo"},
		{&a.getProgramInfo, "clGetProgramInfo"}, {&a.createKernel, "clCreateKernel"},
		{&a.setKernelArg, "clSetKernelArg"}, {&a.getKernelGroupInfo, "clGetKernelWorkGroupInfo"},
		{&a.createBuffer, "clCreateBuffer"},
		{&a.enqueueWrite, "clEnqueueWriteBuffer"}, {&a.enqueueRead, "clEnqueueReadBuffer"},
		{&a.enqueueFill, "clEnqueueFillBuffer"}, {&a.enqueueNDRange, "clEnqueueNDRangeKernel"},
		{&a.enqueueMap, "clEnqueueMapBuffer"}, {&a.enqueueUnmap, "clEnqueueUnmapMemObject"},
		{&a.finish, "clFinish"}, {&a.waitForEvents, "clWaitForEvents"},
		{&a.getProfilingInfo, "clGetEventProfilingInfo"}, {&a.releaseEvent, "clReleaseEvent"},
		{&a.releaseMem, "clReleaseMemObject"}, {&a.releaseKernel, "clReleaseKernel"},
		{&a.releaseProgram, "clReleaseProgram"}, {&a.releaseQueue, "clReleaseCommandQueue"},
		{&a.releaseContext, "clReleaseContext"},
	} {
		purego.RegisterLibFunc(f.fn, h, f.name)
	}
	// OpenCL 2.0 deprecates clCreateCommandQueue for this one; older
	// drivers lack it.
	if _, err := purego.Dlsym(h, "clCreateCommandQueueWithProperties"); err == nil {
		purego.RegisterLibFunc(&a.createQueueWithProp, h, "clCreateCommandQueueWithProperties")
	}
	return a, nil
}
