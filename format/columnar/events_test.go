package columnar

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hitflow/hitflow/jpet"
)

// TestEventsParquet writes simulated events as Parquet and as the binary
// format: both read back to the same events.
func TestEventsParquet(t *testing.T) {
	s := jpet.PaperScanner().WithDefaults()
	sim, err := jpet.Simulate(t.Context(), s, jpet.PaperPhantom(), jpet.SimOptions{Emissions: 200000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(sim.Events) <= rowGroup {
		t.Fatalf("%d events: want more than a row group", len(sim.Events))
	}
	name := filepath.Join(t.TempDir(), "e.parquet")
	f, _ := os.Create(name)
	if err := WriteEvents(f, sim.Events); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := ReadEvents(name)
	if err != nil {
		t.Fatal(err)
	}
	var bin bytes.Buffer
	jpet.WriteEvents(&bin, sim.Events)
	want, err := jpet.ReadEvents(&bin, "e.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%d events read, want %d equal to the binary format's", len(got), len(want))
	}
	if _, err := ReadEvents(filepath.Join(t.TempDir(), "missing.parquet")); err == nil {
		t.Fatal("missing file accepted")
	}
}
