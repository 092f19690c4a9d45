package tiff

import (
	"bytes"
	"image"
	"strings"
	"testing"

	xtiff "golang.org/x/image/tiff"
)

func TestWriteCounts(t *testing.T) {
	counts := []uint32{0, 1, 2, 300, 65535, 7}
	var b bytes.Buffer
	if err := WriteCounts(&b, 3, 2, counts); err != nil {
		t.Fatal(err)
	}
	img, err := xtiff.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := img.(*image.Gray16)
	if !ok || g.Bounds() != image.Rect(0, 0, 3, 2) {
		t.Fatalf("decoded %T %v", img, img.Bounds())
	}
	for k, want := range counts {
		if got := g.Gray16At(k%3, k/3).Y; uint32(got) != want {
			t.Errorf("(%d, %d) = %d, want %d", k%3, k/3, got, want)
		}
	}
	for _, c := range []struct {
		w, h   int
		counts []uint32
		want   string
	}{
		{2, 2, []uint32{1, 2, 3}, "3 counts for 2 x 2"},
		{2, 1, []uint32{1, 65536}, "bin (1, 0) holds 65536"},
	} {
		if err := WriteCounts(&b, c.w, c.h, c.counts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
