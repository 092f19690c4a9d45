package opencl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"
	"unsafe"

	"github.com/hitflow/hitflow/internal/outfile"
)

// Program is OpenCL C compiled for the context's device.
type Program struct {
	c    *Context
	prog uintptr
	// Cached reports whether the program came from the binary cache.
	Cached bool
}

// BuildError is a program that did not compile: the compiler's log says
// why.
type BuildError struct {
	Device string
	Log    string
	Err    error
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("opencl: building the kernels for %s: %v\n%s", e.Device, e.Err, e.Log)
}

func (e *BuildError) Unwrap() error { return e.Err }

const (
	programBuildLog    = 0x1183 // CL_PROGRAM_BUILD_LOG
	programBinarySizes = 0x1165 // CL_PROGRAM_BINARY_SIZES
	programBinaries    = 0x1166 // CL_PROGRAM_BINARIES
)

// CacheDir is where compiled programs are kept between runs (under the
// user's cache directory), keyed by the source, the options, the device
// and its driver version; "" keeps none.
var CacheDir = defaultCacheDir()

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "hitflow", "opencl")
}

// Build compiles source with the build options for the context's device,
// or loads the binary a previous build left in CacheDir.
func (c *Context) Build(source, options string) (*Program, error) {
	key := cacheKey(source, options, c.Device)
	if bin := readCache(key); bin != nil {
		if p, err := c.buildBinary(bin, options); err == nil {
			p.Cached = true
			return p, nil
		}
		// A stale or damaged binary: compile the source again.
	}
	var code int32
	src := append([]byte(source), 0)
	ptr := unsafe.Pointer(&src[0])
	prog := c.a.createProgramSource(c.ctx, 1, &ptr, nil, &code)
	runtime.KeepAlive(src)
	p, err := c.compile("clCreateProgramWithSource", prog, code, options)
	if err != nil {
		return nil, err
	}
	if bin, err := p.binary(); err == nil {
		writeCache(key, bin)
	}
	return p, nil
}

// buildBinary makes a program of a binary from the cache.
func (c *Context) buildBinary(bin []byte, options string) (*Program, error) {
	var code, status int32
	dev := c.Device.id
	n := uintptr(len(bin))
	ptr := unsafe.Pointer(&bin[0])
	prog := c.a.createProgramBinary(c.ctx, 1, &dev, &n, &ptr, &status, &code)
	runtime.KeepAlive(bin)
	return c.compile("clCreateProgramWithBinary", prog, code, options)
}

// compile builds a program that op made (with its return code); a
// program that does not build is released.
func (c *Context) compile(op string, prog uintptr, code int32, options string) (*Program, error) {
	if err := check(op, code); err != nil {
		return nil, err
	}
	live.programs.Add(1)
	p := &Program{c: c, prog: prog}
	if err := p.build(options); err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// build runs the compiler; a failure comes with its log.
func (p *Program) build(options string) error {
	dev := p.c.Device.id
	err := check("clBuildProgram", p.c.a.buildProgram(p.prog, 1, &dev, options, 0, 0))
	if err == nil {
		return nil
	}
	log, _ := infoString(func(size uintptr, v unsafe.Pointer, ret *uintptr) int32 {
		return p.c.a.getProgramBuildInfo(p.prog, dev, programBuildLog, size, v, ret)
	}, "clGetProgramBuildInfo")
	return &BuildError{Device: p.c.Device.String(), Log: log, Err: err}
}

// binary returns the compiled program for the device.
func (p *Program) binary() ([]byte, error) {
	var size uintptr
	if err := check("clGetProgramInfo", p.c.a.getProgramInfo(p.prog, programBinarySizes, unsafe.Sizeof(size), unsafe.Pointer(&size), nil)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("opencl: the driver gives no binary")
	}
	bin := make([]byte, size)
	ptr := unsafe.Pointer(&bin[0])
	err := check("clGetProgramInfo", p.c.a.getProgramInfo(p.prog, programBinaries, unsafe.Sizeof(ptr), unsafe.Pointer(&ptr), nil))
	runtime.KeepAlive(bin)
	return bin, err
}

// Release frees the program; a second call does nothing.
func (p *Program) Release() error {
	if p == nil || p.prog == 0 {
		return nil
	}
	err := check("clReleaseProgram", p.c.a.releaseProgram(p.prog))
	p.prog = 0
	live.programs.Add(-1)
	return err
}

// cacheKey names a compiled program by everything it depends on.
func cacheKey(source, options string, d Device) string {
	h := sha256.New()
	for _, s := range []string{source, options, d.PlatformName, d.Name, d.Vendor, d.Driver, d.Version} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func readCache(key string) []byte {
	if CacheDir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(CacheDir, key+".bin"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return b
}

// writeCache keeps a compiled program; a cache that cannot be written is
// no error: the next run compiles again.
func writeCache(key string, bin []byte) {
	if CacheDir == "" || os.MkdirAll(CacheDir, 0o755) != nil {
		return
	}
	outfile.Write(filepath.Join(CacheDir, key+".bin"), func(w io.Writer) error {
		_, err := w.Write(bin)
		return err
	})
}

// Kernel is a function of a program, with its arguments.
type Kernel struct {
	p    *Program
	k    uintptr
	Name string
}

// Kernel returns the program's kernel of that name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	var code int32
	k := p.c.a.createKernel(p.prog, name, &code)
	if err := check("clCreateKernel", code); err != nil {
		return nil, fmt.Errorf("%w (kernel %s)", err, name)
	}
	live.kernels.Add(1)
	return &Kernel{p: p, k: k, Name: name}, nil
}

// Release frees the kernel; a second call does nothing.
func (k *Kernel) Release() error {
	if k == nil || k.k == 0 {
		return nil
	}
	err := check("clReleaseKernel", k.p.c.a.releaseKernel(k.k))
	k.k = 0
	live.kernels.Add(-1)
	return err
}

// MaxGroup is the largest work-group the kernel runs in on its device,
// which its registers and local memory may make smaller than the
// device's maximum.
func (k *Kernel) MaxGroup() (int, error) {
	c := k.p.c
	var n uintptr
	if err := check("clGetKernelWorkGroupInfo", c.a.getKernelGroupInfo(k.k, c.Device.id, 0x11B0 /* CL_KERNEL_WORK_GROUP_SIZE */, unsafe.Sizeof(n), unsafe.Pointer(&n), nil)); err != nil {
		return 0, fmt.Errorf("%w (kernel %s)", err, k.Name)
	}
	return int(n), nil
}

// Local is a kernel argument of that many bytes of local memory.
type Local int

// SetArgs sets the kernel's arguments in order: *Buffer, Local, and the
// fixed-size numbers int32, uint32, int64, uint64, float32 and float64.
func (k *Kernel) SetArgs(args ...any) error {
	for i, arg := range args {
		var size uintptr
		var ptr unsafe.Pointer
		var v8 [8]byte
		switch a := arg.(type) {
		case *Buffer:
			size, ptr = unsafe.Sizeof(a.mem), unsafe.Pointer(&a.mem)
		case Local:
			size = uintptr(a)
		case int32:
			*(*int32)(unsafe.Pointer(&v8)) = a
			size, ptr = 4, unsafe.Pointer(&v8)
		case uint32:
			*(*uint32)(unsafe.Pointer(&v8)) = a
			size, ptr = 4, unsafe.Pointer(&v8)
		case int64:
			*(*int64)(unsafe.Pointer(&v8)) = a
			size, ptr = 8, unsafe.Pointer(&v8)
		case uint64:
			*(*uint64)(unsafe.Pointer(&v8)) = a
			size, ptr = 8, unsafe.Pointer(&v8)
		case float32:
			*(*uint32)(unsafe.Pointer(&v8)) = math.Float32bits(a)
			size, ptr = 4, unsafe.Pointer(&v8)
		case float64:
			*(*uint64)(unsafe.Pointer(&v8)) = math.Float64bits(a)
			size, ptr = 8, unsafe.Pointer(&v8)
		default:
			return fmt.Errorf("opencl: kernel %s argument %d: %T is not a kernel argument", k.Name, i, arg)
		}
		if err := check("clSetKernelArg", k.p.c.a.setKernelArg(k.k, uint32(i), size, ptr)); err != nil {
			return fmt.Errorf("%w (kernel %s argument %d)", err, k.Name, i)
		}
	}
	return nil
}

// Run enqueues the kernel over global work-items in work-groups of local
// (nil: the driver's choice) and waits for it; it returns the time the
// device spent.
func (k *Kernel) Run(global, local []int) (time.Duration, error) {
	e, err := k.Start(global, local)
	if err != nil {
		return 0, err
	}
	defer e.Release()
	d, err := e.Elapsed()
	if err != nil {
		return 0, fmt.Errorf("%w (kernel %s)", err, k.Name)
	}
	return d, nil
}

// Start enqueues the kernel as Run does, after the commands of after (on
// either queue), and returns at once. The arguments are taken as they are
// now: they may be set again for the next launch.
func (k *Kernel) Start(global, local []int, after ...*Event) (*Event, error) {
	c := k.p.c
	if err := c.injected(); err != nil {
		return nil, err
	}
	if len(global) == 0 || len(global) > 3 || local != nil && len(local) != len(global) {
		return nil, fmt.Errorf("opencl: kernel %s: %d global and %d local dimensions", k.Name, len(global), len(local))
	}
	var g, l [3]uintptr
	for i := range global {
		g[i] = uintptr(global[i])
	}
	var lp *uintptr
	if local != nil {
		for i := range local {
			l[i] = uintptr(local[i])
		}
		lp = &l[0]
	}
	nw, list := waitList(after)
	e := &Event{c: c}
	if err := check("clEnqueueNDRangeKernel", c.a.enqueueNDRange(c.queue, k.k, uint32(len(global)), nil, &g[0], lp, nw, list, &e.ev)); err != nil {
		return nil, fmt.Errorf("%w (kernel %s)", err, k.Name)
	}
	live.events.Add(1)
	return e, nil
}
