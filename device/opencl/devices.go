package opencl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// Platform is an OpenCL implementation installed on the machine (a
// vendor's driver, PoCL) with its devices.
type Platform struct {
	Index                 int
	Name, Vendor, Version string
	Devices               []Device
}

// Device is one device of a platform.
type Device struct {
	id       uintptr
	platform uintptr
	// Platform and Index place the device: "opencl:Platform.Index".
	Platform, Index int
	PlatformName    string
	Name, Vendor    string
	Type            string // gpu, cpu, accelerator, custom or default
	ComputeUnits    int
	GlobalMem       int64 // bytes
	MaxAlloc        int64 // bytes in one buffer
	LocalMem        int64 // bytes per work-group
	MaxWorkGroup    int
	FP64            bool
	Driver          string // driver version
	Version         string // OpenCL version the device supports
}

// OpenCL parameter names (cl.h).
const (
	platformVersion = 0x0901
	platformName    = 0x0902
	platformVendor  = 0x0903

	deviceTypeAll        = 0xFFFFFFFF
	deviceType           = 0x1000
	deviceComputeUnits   = 0x1002
	deviceMaxWorkGroup   = 0x1004
	deviceMaxAlloc       = 0x1010
	deviceGlobalMem      = 0x101F
	deviceLocalMem       = 0x1023
	deviceName           = 0x102B
	deviceVendor         = 0x102C
	deviceDriverVersion  = 0x102D
	deviceVersion        = 0x102F
	deviceDoubleFPConfig = 0x1032

	typeCPU         = 1 << 1
	typeGPU         = 1 << 2
	typeAccelerator = 1 << 3
	typeCustom      = 1 << 4
)

// Platforms lists every OpenCL platform and device, loading the library
// first. A machine with the loader but no driver has none: the error
// then says so.
func Platforms() ([]Platform, error) {
	a, err := lib()
	if err != nil {
		return nil, err
	}
	var n uint32
	if code := a.getPlatformIDs(0, nil, &n); code == -1001 || n == 0 {
		return nil, fmt.Errorf("opencl: no OpenCL platform: the loader found no driver (install your GPU vendor's OpenCL driver, or pocl-opencl-icd to run on the CPU)")
	} else if err := check("clGetPlatformIDs", code); err != nil {
		return nil, err
	}
	ids := make([]uintptr, n)
	if err := check("clGetPlatformIDs", a.getPlatformIDs(n, &ids[0], nil)); err != nil {
		return nil, err
	}
	var out []Platform
	for pi, id := range ids {
		p := Platform{Index: pi}
		for _, f := range []struct {
			param uint32
			dst   *string
		}{{platformName, &p.Name}, {platformVendor, &p.Vendor}, {platformVersion, &p.Version}} {
			if *f.dst, err = infoString(func(size uintptr, v unsafe.Pointer, ret *uintptr) int32 {
				return a.getPlatformInfo(id, f.param, size, v, ret)
			}, "clGetPlatformInfo"); err != nil {
				return nil, err
			}
		}
		var nd uint32
		switch code := a.getDeviceIDs(id, deviceTypeAll, 0, nil, &nd); {
		case code == -1 || nd == 0: // CL_DEVICE_NOT_FOUND: a platform without devices
		case code != 0:
			return nil, check("clGetDeviceIDs", code)
		default:
			devs := make([]uintptr, nd)
			if err := check("clGetDeviceIDs", a.getDeviceIDs(id, deviceTypeAll, nd, &devs[0], nil)); err != nil {
				return nil, err
			}
			for di, d := range devs {
				dev, err := describe(a, d, id)
				if err != nil {
					return nil, err
				}
				dev.Platform, dev.Index, dev.PlatformName = pi, di, p.Name
				p.Devices = append(p.Devices, dev)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// describe reads what hitflow needs to know about a device.
func describe(a *api, d, platform uintptr) (Device, error) {
	dev := Device{id: d, platform: platform}
	info := func(param uint32) ([]byte, error) {
		return infoBytes(func(size uintptr, v unsafe.Pointer, ret *uintptr) int32 {
			return a.getDeviceInfo(d, param, size, v, ret)
		}, "clGetDeviceInfo")
	}
	var err error
	for _, f := range []struct {
		param uint32
		dst   *string
	}{{deviceName, &dev.Name}, {deviceVendor, &dev.Vendor}, {deviceDriverVersion, &dev.Driver}, {deviceVersion, &dev.Version}} {
		b, e := info(f.param)
		if e != nil {
			return dev, e
		}
		*f.dst = cString(b)
	}
	num := func(param uint32) uint64 {
		b, e := info(param)
		if e != nil {
			err = e
			return 0
		}
		switch len(b) {
		case 4:
			return uint64(binary.NativeEndian.Uint32(b))
		case 8:
			return binary.NativeEndian.Uint64(b)
		}
		return 0
	}
	switch t := num(deviceType); {
	case t&typeGPU != 0:
		dev.Type = "gpu"
	case t&typeCPU != 0:
		dev.Type = "cpu"
	case t&typeAccelerator != 0:
		dev.Type = "accelerator"
	case t&typeCustom != 0:
		dev.Type = "custom"
	default:
		dev.Type = "default"
	}
	dev.ComputeUnits = int(num(deviceComputeUnits))
	dev.GlobalMem = int64(num(deviceGlobalMem))
	dev.MaxAlloc = int64(num(deviceMaxAlloc))
	dev.LocalMem = int64(num(deviceLocalMem))
	dev.MaxWorkGroup = int(num(deviceMaxWorkGroup))
	dev.FP64 = num(deviceDoubleFPConfig) != 0
	return dev, err
}

// infoBytes calls a clGet...Info function twice: for the size, then the
// value.
func infoBytes(get func(size uintptr, v unsafe.Pointer, ret *uintptr) int32, op string) ([]byte, error) {
	var size uintptr
	if err := check(op, get(0, nil, &size)); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	b := make([]byte, size)
	if err := check(op, get(size, unsafe.Pointer(&b[0]), nil)); err != nil {
		return nil, err
	}
	return b, nil
}

func infoString(get func(size uintptr, v unsafe.Pointer, ret *uintptr) int32, op string) (string, error) {
	b, err := infoBytes(get, op)
	return cString(b), err
}

// cString is the text of a NUL-terminated C string, trimmed.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

// Select finds the device a --device flag names: "opencl" is the first
// GPU, or else the first device; "opencl:P.D" device D of platform P (as
// "hitflow devices" numbers them).
func Select(spec string) (Device, error) {
	rest, ok := strings.CutPrefix(spec, "opencl")
	if !ok || rest != "" && rest[0] != ':' {
		return Device{}, fmt.Errorf("opencl: device %q: want opencl or opencl:P.D", spec)
	}
	want := [2]int{-1, -1}
	if rest != "" {
		ps, ds, ok := strings.Cut(rest[1:], ".")
		p, err1 := strconv.Atoi(ps)
		d, err2 := strconv.Atoi(ds)
		if !ok || err1 != nil || err2 != nil || p < 0 || d < 0 {
			return Device{}, fmt.Errorf("opencl: device %q: want opencl:P.D with the platform and device numbers of hitflow devices", spec)
		}
		want = [2]int{p, d}
	}
	platforms, err := Platforms()
	if err != nil {
		return Device{}, err
	}
	var first *Device
	for _, p := range platforms {
		for i := range p.Devices {
			d := &p.Devices[i]
			switch {
			case want[0] >= 0 && d.Platform == want[0] && d.Index == want[1]:
				return *d, nil
			case want[0] < 0 && d.Type == "gpu":
				return *d, nil
			case first == nil:
				first = d
			}
		}
	}
	if want[0] >= 0 {
		return Device{}, fmt.Errorf("opencl: no device %d.%d: hitflow devices lists them", want[0], want[1])
	}
	if first == nil {
		return Device{}, fmt.Errorf("opencl: the OpenCL platforms have no device")
	}
	return *first, nil
}

// String names the device as hitflow devices lists it.
func (d Device) String() string {
	return fmt.Sprintf("opencl:%d.%d %s (%s, %s)", d.Platform, d.Index, d.Name, d.PlatformName, d.Type)
}
