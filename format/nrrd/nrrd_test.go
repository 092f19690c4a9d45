package nrrd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/jpet"
)

func TestImage(t *testing.T) {
	var buf bytes.Buffer
	img := jpet.Image{Values: []float64{1, 2, 3, 4, 5, 0.1}, NZ: 3, NY: 2, Pixel: 0.004}
	if err := WriteImage(&buf, img); err != nil {
		t.Fatal(err)
	}
	hdr, data, ok := bytes.Cut(buf.Bytes(), []byte("\n\n"))
	if !ok || !strings.Contains(string(hdr), "sizes: 3 2") || len(data) != 24 || math.Float32frombits(binary.LittleEndian.Uint32(data[16:])) != 5 {
		t.Fatalf("%q", buf.String())
	}
	got, err := ReadImage(bytes.NewReader(buf.Bytes()), "a.nrrd")
	if err != nil {
		t.Fatal(err)
	}
	if got.NZ != 3 || got.NY != 2 || got.Pixel != 0.004 || got.Values[4] != 5 || got.Values[5] != float64(float32(0.1)) {
		t.Fatalf("%+v", got)
	}
	for _, tc := range []struct{ in, want string }{
		{"P5\n", "line 1"},
		{"NRRD0004\ntype: double\ndimension: 2\nsizes: 1 1\nendian: little\nencoding: raw\n\n", "type"},
		{"NRRD0004\ntype: float\ndimension: 2\nsizes: 2 x\nendian: little\nencoding: raw\n\n", "sizes"},
		{"NRRD0004\ntype: float\ndimension: 3\nsizes: 2 1\nendian: little\nencoding: raw\n\n", "dimension \"3\" with sizes \"2 1\""},
		{"NRRD0004\ntype: float\ndimension: 2\nsizes: 65536 65536\nendian: little\nencoding: raw\n\n", "at most 2^28"},
		{"NRRD0004\ntype: float\ndimension: 2\nsizes: 2 1\nendian: big\nencoding: raw\n\n", "endian \"big\""},
		{"NRRD0004\ntype: float\ndimension: 2\nsizes: 2 1\nendian: little\nencoding: raw\n\n1234", "byte 79: 4 of 8"},
		{"NRRD0004\ntype: float\n", "line 3"},
		{"NRRD0004\ntype: float\ndimension: 1\nsizes: 1\nendian: little\nencoding: raw\n\n1234", "1 dimensions of float, want a 2D float image"},
		{"NRRD0004\ntype: uint32\ndimension: 2\nsizes: 1 1\nendian: little\nencoding: raw\n\n1234", "2 dimensions of uint32"},
	} {
		if _, err := ReadImage(strings.NewReader(tc.in), "a.nrrd"); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "a.nrrd") {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestCounts: a 3D count volume with its axes reads back whole.
func TestCounts(t *testing.T) {
	h := Header{
		Sizes: []int{3, 2, 2}, Spacings: []float64{0.125, 0.125, 20000}, Mins: []float64{-0.5, -0.5, 0},
		Labels: []string{"x", "y", "time of flight"}, Units: []string{"pixel", "pixel", "ns"}, Comment: "made by a test\nof counts",
	}
	v := []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, math.MaxUint32}
	var buf bytes.Buffer
	if err := WriteUint32(&buf, h, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "# made by a test\n# of counts\ntype: uint32\ndimension: 3\nsizes: 3 2 2\nspacings: 0.125 0.125 20000\naxis mins: -0.5 -0.5 0\nlabels: \"x\" \"y\" \"time of flight\"\n") {
		t.Errorf("header:\n%s", buf.String())
	}
	got, values, err := Read(&buf, "c.nrrd")
	if err != nil {
		t.Fatal(err)
	}
	h.Type = "uint32"
	if fmt.Sprint(got) != fmt.Sprint(h) || values[11] != math.MaxUint32 || values[4] != 4 || len(values) != 12 {
		t.Errorf("read back %+v %v", got, values)
	}
	if err := WriteUint32(&buf, Header{Sizes: []int{2, 2}}, v); err == nil {
		t.Error("12 values for 2x2 written")
	}
}

// FuzzRead checks that the reader never panics, names the file in its
// errors, and returns as many values as the sizes say.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	WriteImage(&buf, jpet.Image{Values: []float64{1, 2, 3, 4}, NZ: 2, NY: 2, Pixel: 0.004})
	f.Add(buf.Bytes())
	buf.Reset()
	WriteUint32(&buf, Header{Sizes: []int{1, 1, 2}, Labels: []string{"x", "y", "t"}, Mins: []float64{0, 1, 2}}, []uint32{7, 8})
	f.Add(buf.Bytes())
	f.Add([]byte("NRRD0004\ntype: float\ndimension: 2\nsizes: 100000 100000\nendian: little\nencoding: raw\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, v, err := Read(bytes.NewReader(data), "fuzz.nrrd")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.nrrd") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		n := 1
		for _, s := range h.Sizes {
			n *= s
		}
		if len(v) != n {
			t.Fatalf("%d values for sizes %v", len(v), h.Sizes)
		}
	})
}
