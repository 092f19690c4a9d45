package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestPetCommands(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "ph")
	code, _, stderr := hitflow(t, "pet", "simulate", "--emissions", "20000", "--seed", "4", "--text", "--parquet", "-o", prefix)
	if code != 0 || !strings.Contains(stderr, "wrote "+prefix+".bin, "+prefix+".txt, "+prefix+".parquet and images 75x63") || strings.Contains(stderr, "outside") {
		t.Fatalf("simulate: %s", stderr)
	}
	// A phantom in millimetres emits beyond the image, and the summary
	// says so.
	mm := filepath.Join(dir, "mm.txt")
	if err := os.WriteFile(mm, []byte("ellipse 0 0 60 30 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := hitflow(t, "pet", "simulate", "-q", "--emissions", "2000", "--phantom", mm, "-o", filepath.Join(dir, "mm")); code != 0 ||
		!strings.Contains(stderr, "emissions 2000 (2000 outside the image's 0.3 x 0.252 m; the phantom is in metres), detected ") {
		t.Fatalf("simulate a phantom in mm: %s", stderr)
	}
	fi, err := os.Stat(prefix + ".bin")
	if err != nil || fi.Size()%12 != 0 || fi.Size() == 0 {
		t.Fatalf("events file: %v", err)
	}
	for _, img := range []string{"_emitted", "_detected", "_naive"} {
		b, err := os.ReadFile(prefix + img + ".nrrd")
		if err != nil || !bytes.HasPrefix(b, []byte("NRRD0004\n")) || !bytes.Contains(b, []byte("sizes: 75 63")) {
			t.Fatalf("%s: %v", img, err)
		}
	}
	rec := filepath.Join(dir, "rec")
	code, _, stderr = hitflow(t, "pet", "reconstruct", prefix+".bin", "--iterations", "3", "--png-every", "2", "--truth", "paper", "-o", rec)
	if code != 0 {
		t.Fatalf("reconstruct: %s", stderr)
	}
	nrmse := regexp.MustCompile(`NRMSE ([0-9.]+)`).FindAllStringSubmatch(stderr, -1)
	if len(nrmse) != 3 || !(nrmse[2][1] < nrmse[0][1]) {
		t.Fatalf("NRMSE lines %v in %q", nrmse, stderr)
	}
	for _, f := range []string{rec + ".nrrd", rec + "_02.png", rec + "_03.png"} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
	// The text and Parquet forms hold the binary's float32 values (the
	// text read back to float32): the image is the same to the bit.
	a, _ := os.ReadFile(rec + ".nrrd")
	for _, ext := range []string{".txt", ".parquet"} {
		if code, _, stderr := hitflow(t, "pet", "reconstruct", prefix+ext, "--iterations", "3", "--png-every", "0", "-o", rec+ext); code != 0 {
			t.Fatalf("%s events: %s", ext, stderr)
		}
		if b, _ := os.ReadFile(rec + ext + ".nrrd"); len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("the %s events reconstruct to another image", ext)
		}
	}
	bad := filepath.Join(dir, "bad.bin")
	os.WriteFile(bad, make([]byte, 13), 0o644)
	os.Symlink(prefix+".bin", filepath.Join(dir, "lnk.nrrd"))
	events, _ := os.ReadFile(prefix + ".bin")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"pet", "reconstruct", bad, "-o", rec}, 1, "bad.bin: byte 12: 1 trailing bytes"},
		{[]string{"pet", "reconstruct", prefix + ".bin", "--kernel", "box", "-o", rec}, 2, "unknown kernel"},
		{[]string{"pet", "reconstruct", prefix + ".bin", "--radius", "-1", "-o", rec}, 2, "R = -1"},
		{[]string{"pet", "simulate", "--angle", "120", "-o", prefix}, 2, "--angle 120: want degrees in (0, 90]"},
		{[]string{"pet", "simulate", "--angle", "0", "-o", prefix}, 2, "--angle 0: want degrees in (0, 90]"},
		{[]string{"pet", "reconstruct", prefix + ".bin", "-o", filepath.Join(dir, "nodir", "r")}, 2, "nodir does not exist"},
		{[]string{"pet", "reconstruct", prefix + ".bin", "-o", filepath.Join(dir, "lnk")}, 2, "-o " + filepath.Join(dir, "lnk.nrrd") + " is the input " + prefix + ".bin"},
		{[]string{"pet", "reconstruct", filepath.Join(dir, "calo.csv"), "-o", rec}, 2, `unknown format ".csv" for J-PET events (want .bin, .txt or .parquet)`},
		{[]string{"pet", "simulate", "--phantom", bad, "-o", filepath.Join(dir, "bad")}, 2, "refusing to overwrite an input"},
		{[]string{"bench", "pet", "--events", "0"}, 2, "--events"},
		{[]string{"bench", "pet", "--kernel-cache", "lots"}, 2, `"lots" is not a number of MiB or auto`},
		{[]string{"pet", "reconstruct", prefix + ".bin", "--kernel-cache", "-1", "-o", rec}, 2, "--kernel-cache"},
	} {
		code, _, stderr := hitflow(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want %d with %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	if b, _ := os.ReadFile(prefix + ".bin"); !bytes.Equal(b, events) {
		t.Fatal("a refused command changed the events file")
	}
}

// TestBenchPet: a row per kernel and worker count; every event's kernel
// values kept within the budget, none without one.
func TestBenchPet(t *testing.T) {
	for _, tc := range []struct {
		cache string
		kept  string
	}{{"64", "2000"}, {"0", "0"}} {
		code, stdout, stderr := hitflow(t, "bench", "pet", "--events", "2000", "--kernel-cache", tc.cache)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows := 0
		for line := range strings.Lines(stdout) {
			if strings.HasPrefix(line, "| 2000 |") {
				rows++
				if cols := strings.Split(line, "|"); len(cols) < 5 || strings.TrimSpace(cols[4]) != tc.kept {
					t.Errorf("cache %s MiB: %q does not keep %s events", tc.cache, line, tc.kept)
				}
			}
		}
		if want := 2 * min(2, runtime.GOMAXPROCS(0)); rows != want {
			t.Errorf("cache %s MiB: %d rows, want %d:\n%s", tc.cache, rows, want, stdout)
		}
	}
}
