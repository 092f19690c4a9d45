package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	xtiff "golang.org/x/image/tiff"

	"github.com/hitflow/hitflow/format"
	"github.com/hitflow/hitflow/format/nrrd"
	"github.com/hitflow/hitflow/pixel"
)

// TestImage images the clusters of a real run with time of flight: the
// NRRD stack holds each cluster in the bin of its centroid and time, the
// TIFF stack the same counts, the PNG is a PNG.
func TestImage(t *testing.T) {
	in := "../../../shared/data/tpx3/greg_220ms_TDC_GDC_enabled_20230214_3.tpx3"
	if _, err := os.Stat(in); err != nil {
		t.Skip("no ../shared/data")
	}
	dir := t.TempDir()
	clusters := filepath.Join(dir, "tof.parquet")
	if code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "quad", "--tof", "tdc1r", "-o", clusters, in); code != 0 {
		t.Fatalf("cluster: exit %d: %s", code, stderr)
	}
	c, err := format.ReadClusters(clusters)
	if err != nil {
		t.Fatal(err)
	}
	const scale, bins = 4, 5
	span := 20 * pixel.Millisecond
	stack := filepath.Join(dir, "stack.nrrd")
	code, _, stderr := hitflow(t, "image", "--layout", "quad", "--scale", "4", "--tof-bins", "0:20ms:5", "-o", stack, clusters)
	if code != 0 || !strings.Contains(stderr, "hitflow: 76 clusters in a 2064x2064 image (4 per pixel) x 5 time-of-flight bins of 4ms from 0ns") {
		t.Fatalf("image: exit %d: %s", code, stderr)
	}
	f, err := os.Open(stack)
	if err != nil {
		t.Fatal(err)
	}
	h, counts, err := nrrd.Read(f, stack)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if h.Type != "uint32" || len(h.Sizes) != 3 || h.Sizes[0] != 516*scale || h.Sizes[2] != bins || h.Spacings[2] != 4e6 || h.Labels[2] != "time of flight" {
		t.Fatalf("header %+v", h)
	}
	want := make([]float64, len(counts))
	for i := range c.Len() {
		x, y := int(math.Floor((c.X[i]+0.5)*scale)), int(math.Floor((c.Y[i]+0.5)*scale))
		k := int(c.TOF[i] * bins / span)
		want[(k*h.Sizes[1]+y)*h.Sizes[0]+x]++
	}
	if !slices.Equal(counts, want) {
		t.Fatal("the NRRD counts are not the clusters' bins")
	}
	// The same clusters as an Arrow file, and as the Arrow stream of
	// standard output kept in a file, image to the same bytes.
	arrowFile, arrowStream := filepath.Join(dir, "tof.arrow"), filepath.Join(dir, "stream.arrow")
	if code, _, stderr := hitflow(t, "cluster", "-q", "--layout", "quad", "--tof", "tdc1r", "-o", arrowFile, in); code != 0 {
		t.Fatalf("cluster: exit %d: %s", code, stderr)
	}
	code, stream, stderr := hitflow(t, "cluster", "-q", "--layout", "quad", "--tof", "tdc1r", "-o", "-.arrow", in)
	if err := os.WriteFile(arrowStream, []byte(stream), 0o644); code != 0 || err != nil {
		t.Fatalf("cluster: exit %d: %s %v", code, stderr, err)
	}
	wantBytes, err := os.ReadFile(stack)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{arrowFile, arrowStream} {
		out := filepath.Join(dir, "arrow.nrrd")
		if code, _, stderr := hitflow(t, "image", "--layout", "quad", "--scale", "4", "--tof-bins", "0:20ms:5", "-o", out, src); code != 0 {
			t.Fatalf("image %s: exit %d: %s", src, code, stderr)
		}
		if b, err := os.ReadFile(out); err != nil || !bytes.Equal(b, wantBytes) {
			t.Fatalf("image %s: not the image of the Parquet file (%v)", src, err)
		}
	}
	tiff := filepath.Join(dir, "stack.tiff")
	if code, _, stderr := hitflow(t, "image", "--layout", "quad", "--scale", "4", "--tof-bins", "0:20ms:5", "-o", tiff, clusters); code != 0 || !strings.Contains(stderr, "wrote "+filepath.Join(dir, "stack_0000.tiff")+" to "+filepath.Join(dir, "stack_0004.tiff")) {
		t.Fatalf("tiff: exit %d: %s", code, stderr)
	}
	plane := h.Sizes[0] * h.Sizes[1]
	for k := range bins {
		b, err := os.ReadFile(filepath.Join(dir, "stack_000"+strconv.Itoa(k)+".tiff"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := xtiff.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		for p := range plane {
			r, _, _, _ := img.At(p%h.Sizes[0], p/h.Sizes[0]).RGBA()
			if float64(r) != want[k*plane+p] {
				t.Fatalf("tiff %d: bin %d holds %d, want %v", k, p, r, want[k*plane+p])
			}
		}
	}
	png := filepath.Join(dir, "look.png")
	if code, _, stderr := hitflow(t, "image", "--layout", "quad", "--scale", "8", "-o", png, clusters); code != 0 {
		t.Fatalf("png: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("no PNG: %v", err)
	}

	// A bin over 65535 clusters: TIFF refuses before writing, NRRD counts.
	full := filepath.Join(dir, "full.csv")
	var b strings.Builder
	b.WriteString("id,size,toa_ns,span_ns,tot_sum,energy_kev,x,y,xmin,xmax,ymin,ymax,max\n")
	for i := range 65536 {
		b.WriteString(strconv.Itoa(i) + ",1,0,0,5,,3,4,3,3,4,4,5\n")
	}
	if err := os.WriteFile(full, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := hitflow(t, "image", "-o", filepath.Join(dir, "full.tiff"), full); code != exitRuntime || !strings.Contains(stderr, "bin (3, 4) of image 0 holds 65536 clusters") {
		t.Errorf("16-bit overflow: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "full.tiff")); err == nil {
		t.Error("an overflowing TIFF was written")
	}
	if code, _, stderr := hitflow(t, "image", "-o", filepath.Join(dir, "full.nrrd"), full); code != 0 {
		t.Errorf("nrrd: exit %d: %s", code, stderr)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"image", "--tof-bins", "0:1ms:4", "-o", filepath.Join(dir, "x.nrrd"), full}, exitRuntime, full + ": the clusters carry no time of flight"},
		{[]string{"image", "-o", filepath.Join(dir, "x.jpg"), full}, exitUsage, "want an image file"},
		{[]string{"image", "-o", filepath.Join(dir, "x.nrrd"), "--tof-bins", "0:1ms", full}, exitUsage, "MIN:MAX:N"},
		{[]string{"image", "-o", filepath.Join(dir, "x.nrrd"), "--scale", "0", full}, exitUsage, "scale 0"},
		{[]string{"image", "-o", full, full}, exitUsage, full},
		{[]string{"image", "-o", filepath.Join(dir, "x.nrrd")}, exitUsage, "needs the clusters files"},
		{[]string{"image", "-o", filepath.Join(dir, "x.nrrd"), in}, exitRuntime, in},
		{[]string{"image", "--tof-bins", "1s:2s:1", "-o", filepath.Join(dir, "x.nrrd"), clusters}, exitRuntime, "no clusters in the image"},
	} {
		code, _, stderr := hitflow(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", c.args, code, c.code, c.want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.nrrd")); err == nil {
		t.Error("a failed run wrote an image")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"image", "-o", filepath.Join(dir, "c.nrrd"), clusters}, strings.NewReader(""), &out, &errb); code != exitInterrupted {
		t.Errorf("cancelled: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "c.nrrd")); err == nil {
		t.Error("a cancelled run wrote an image")
	}
}
