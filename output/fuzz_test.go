package output

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadClusters feeds damaged cluster files to the readers: an error
// naming the file, never a panic.
func FuzzReadClusters(f *testing.F) {
	dir := f.TempDir()
	for _, ext := range []string{".csv", ".parquet", ".root"} {
		name := filepath.Join(dir, "seed"+ext)
		w, err := CreateClusters(name, nil)
		if err != nil {
			f.Fatal(err)
		}
		w.Write(twoClusters(&testing.T{}, true))
		w.Close()
		b, _ := os.ReadFile(name)
		f.Add(ext, b)
		f.Add(ext, b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, ext string, data []byte) {
		if ext != ".csv" && ext != ".parquet" && ext != ".root" {
			return
		}
		name := filepath.Join(t.TempDir(), "fuzz"+ext)
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := ReadClusters(name)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz"+ext) {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(c.Size) != c.Len() || len(c.X) != c.Len() || bytes.Equal(data, nil) && c.Len() > 0 {
			t.Fatalf("%d clusters with columns of other lengths", c.Len())
		}
	})
}
