package ev44

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel"
	"github.com/hitflow/hitflow/pixel/analysis"
)

var start = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

// encodeAll encodes the batches and decodes every message.
func encodeAll(t *testing.T, opt Options, batches []*pixel.Clusters) (*Encoder, []Message) {
	t.Helper()
	e, err := NewEncoder(opt)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	emit := func(b []byte) error {
		m, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
		return nil
	}
	for _, b := range batches {
		if err := e.Encode(b, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Flush(emit); err != nil {
		t.Fatal(err)
	}
	return e, msgs
}

// events lists the events of the messages, checking their numbers run
// from 0 without a gap and every message holds at most max events.
func events(t *testing.T, msgs []Message, max int) (ns []int64, pixels []int32) {
	t.Helper()
	for k, m := range msgs {
		if m.ID != int64(k) || m.Source != "tpx3-1" || len(m.TimeOfFlight) > max || len(m.TimeOfFlight) == 0 {
			t.Fatalf("message %d: id %d, source %q, %d events", k, m.ID, m.Source, len(m.TimeOfFlight))
		}
		if err := m.Events(func(t int64, p int32) { ns, pixels = append(ns, t), append(pixels, p) }); err != nil {
			t.Fatal(err)
		}
	}
	return ns, pixels
}

// TestEncodeWithoutTOF: every cluster is an event at its first ToA (whole
// ns after the start) on the bin of its centroid, across messages of at
// most MaxEvents; references are renewed before an int32 of ns runs out.
func TestEncodeWithoutTOF(t *testing.T) {
	batches := fixture.Clusters(t, false)
	want := fixture.Concat(batches)
	// Spread the clusters over a minute: many int32 ranges of ns.
	for _, b := range batches {
		for i := range b.FirstToA {
			b.FirstToA[i] *= 1000
		}
	}
	grid, _ := analysis.NewGrid(256, 256, 4)
	_, msgs := encodeAll(t, Options{Source: "tpx3-1", Grid: grid, Start: start, MaxEvents: 100}, batches)
	ns, pixels := events(t, msgs, 100)
	if len(ns) != want.Len() {
		t.Fatalf("%d events of %d clusters", len(ns), want.Len())
	}
	refs := 0
	for _, m := range msgs {
		refs += len(m.ReferenceTime)
	}
	if refs <= len(msgs) {
		t.Errorf("%d references in %d messages: the ToA spread over a minute needs more", refs, len(msgs))
	}
	for i := range want.Len() {
		toa := want.FirstToA[i] * 1000
		x, y := int(math.Floor((want.X[i]+0.5)*4)), int(math.Floor((want.Y[i]+0.5)*4))
		if ns[i] != start.UnixNano()+int64(toa/pixel.Nanosecond) || pixels[i] != int32(y*1024+x) {
			t.Fatalf("event %d: %d ns, pixel %d; want %d, %d", i, ns[i], pixels[i], start.UnixNano()+int64(toa/pixel.Nanosecond), y*1024+x)
		}
	}
}

// TestEncodeWithTOF: the references are the pulses, time_of_flight the
// clusters' own, those before the first pulse counted and left out.
func TestEncodeWithTOF(t *testing.T) {
	batches := fixture.Clusters(t, false)
	all := fixture.Concat(batches)
	tof := analysis.TOF{}
	var refs []pixel.Time
	for r := all.FirstToA[all.Len()/4] + 37; r <= all.FirstToA[all.Len()-1]; r += 7 * pixel.Microsecond {
		refs = append(refs, r)
	}
	tof.AddReferences(refs)
	for _, b := range batches {
		tof.Assign(b)
	}
	want := fixture.Concat(batches)
	grid, _ := analysis.NewGrid(256, 256, 1)
	e, msgs := encodeAll(t, Options{Source: "tpx3-1", Grid: grid, Start: start}, batches)
	ns, pixels := events(t, msgs, DefaultMaxEvents)
	if e.NoPulse != tof.Before() || int64(len(ns))+e.NoPulse != int64(want.Len()) || e.NoPulse == 0 {
		t.Fatalf("%d events, %d before the first pulse, of %d clusters (%d before)", len(ns), e.NoPulse, want.Len(), tof.Before())
	}
	k := 0
	for i := range want.Len() {
		if want.Pulse[i] < 0 {
			continue
		}
		if ns[k] != start.UnixNano()+int64(want.FirstToA[i]/pixel.Nanosecond) || pixels[k] != int32(math.Floor(want.Y[i]+0.5)*256+math.Floor(want.X[i]+0.5)) {
			t.Fatalf("event %d: %d ns, pixel %d", k, ns[k], pixels[k])
		}
		k++
	}
	// Each reference is a pulse.
	isPulse := map[int64]bool{}
	for _, r := range refs {
		isPulse[start.UnixNano()+int64(r/pixel.Nanosecond)] = true
	}
	for _, m := range msgs {
		for _, r := range m.ReferenceTime {
			if !isPulse[r] {
				t.Fatalf("reference %d is no pulse", r)
			}
		}
	}
}

func TestEncoderLimits(t *testing.T) {
	if _, err := NewEncoder(Options{}); err == nil {
		t.Error("an encoder without a grid")
	}
	big, _ := analysis.NewGrid(65536, 65536, 1)
	if _, err := NewEncoder(Options{Grid: big}); err == nil || !strings.Contains(err.Error(), "int32") {
		t.Errorf("a grid beyond int32 pixel ids: %v", err)
	}
	grid, _ := analysis.NewGrid(8, 8, 1)
	e, _ := NewEncoder(Options{Source: "s", Grid: grid, Start: start})
	c := &pixel.Clusters{ID: []int64{0, 1, 2}, X: []float64{1, 9, math.NaN()}, Y: []float64{1, 1, 1},
		FirstToA: []pixel.Time{0, 1, 3 * pixel.Second}, TOF: []pixel.Time{0, 0, 3 * pixel.Second}, Pulse: []int64{0, 0, 0}}
	n := 0
	if err := e.Encode(c, func([]byte) error { n++; return nil }); err != nil || e.Flush(func([]byte) error { n++; return nil }) != nil {
		t.Fatal(err)
	}
	if e.Outside != 2 || n != 1 || e.NextID() != 1 {
		t.Errorf("outside %d, messages %d, next id %d", e.Outside, n, e.NextID())
	}
	// An encoder going on from another numbers on.
	on, _ := NewEncoder(Options{Source: "s", Grid: grid, Start: start, FirstID: e.NextID()})
	if err := on.Encode(c, func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := on.Flush(func(b []byte) (err error) { m, err = Decode(b); return err }); err != nil || m.ID != 1 || on.NextID() != 2 {
		t.Errorf("the message after another encoder's: id %d, next %d, %v", m.ID, on.NextID(), err)
	}
	c.X[1], c.X[2] = 2, 2
	if e.Encode(c, func([]byte) error { return nil }); e.TooLate != 1 {
		t.Errorf("a time of flight of 3 s: %d too late", e.TooLate)
	}
}

func TestDecodeRejects(t *testing.T) {
	grid, _ := analysis.NewGrid(8, 8, 1)
	e, _ := NewEncoder(Options{Source: "s", Grid: grid, Start: start})
	var good []byte
	e.Encode(&pixel.Clusters{ID: []int64{0}, X: []float64{1}, Y: []float64{1}, FirstToA: []pixel.Time{5}}, func([]byte) error { return nil })
	e.Flush(func(b []byte) error { good = append([]byte(nil), b...); return nil })
	if _, err := Decode(good); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"empty":         nil,
		"no identifier": append(append([]byte(nil), good[:4]...), append([]byte("ev43"), good[8:]...)...),
		"cut":           good[:len(good)/2],
	} {
		if _, err := Decode(b); err == nil || !strings.HasPrefix(err.Error(), "ev44: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzDecode: whatever the bytes, Decode returns an error or a message
// whose events can all be listed, never a panic.
func FuzzDecode(f *testing.F) {
	grid, _ := analysis.NewGrid(8, 8, 1)
	e, _ := NewEncoder(Options{Source: "s", Grid: grid, Start: start})
	e.Encode(&pixel.Clusters{ID: []int64{0, 1}, X: []float64{1, 2}, Y: []float64{1, 3}, FirstToA: []pixel.Time{5, 3 * pixel.Second}}, func([]byte) error { return nil })
	e.Flush(func(b []byte) error { f.Add(append([]byte(nil), b...)); return nil })
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		n := 0
		if err := m.Events(func(int64, int32) { n++ }); err == nil && n != len(m.TimeOfFlight) {
			t.Fatalf("%d events of %d", n, len(m.TimeOfFlight))
		}
	})
}

// TestFlatcReadsMessages: flatc, the schema compiler's own C++ reader,
// turns a message into JSON with the values written (a check of the wire
// format independent of the generated Go code).
func TestFlatcReadsMessages(t *testing.T) {
	flatc, err := exec.LookPath("flatc")
	if err != nil {
		t.Skip("no flatc (Debian flatbuffers-compiler)")
	}
	grid, _ := analysis.NewGrid(256, 256, 2)
	e, _ := NewEncoder(Options{Source: "tpx3-1", Grid: grid, Start: start})
	c := &pixel.Clusters{ID: []int64{0, 1}, X: []float64{10, 20.3}, Y: []float64{5, 6.8}, FirstToA: []pixel.Time{640, 3 * pixel.Second}}
	dir := t.TempDir()
	bin := filepath.Join(dir, "m.bin")
	e.Encode(c, func([]byte) error { return nil })
	if err := e.Flush(func(b []byte) error { return os.WriteFile(bin, b, 0o644) }); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(flatc, "--json", "--raw-binary", "--strict-json", "-o", dir, "ev44_events.fbs", "--", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("flatc: %v: %s", err, out)
	}
	js, err := os.ReadFile(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		SourceName         string  `json:"source_name"`
		MessageID          int64   `json:"message_id"`
		ReferenceTime      []int64 `json:"reference_time"`
		ReferenceTimeIndex []int32 `json:"reference_time_index"`
		TimeOfFlight       []int32 `json:"time_of_flight"`
		PixelID            []int32 `json:"pixel_id"`
	}
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	s := start.UnixNano()
	// 3 s is past an int32 of ns: a second reference.
	if m.SourceName != "tpx3-1" || m.MessageID != 0 || !slices.Equal(m.ReferenceTime, []int64{s + 10, s + 3e9}) ||
		!slices.Equal(m.ReferenceTimeIndex, []int32{0, 1}) || !slices.Equal(m.TimeOfFlight, []int32{0, 0}) ||
		!slices.Equal(m.PixelID, []int32{11*512 + 21, 14*512 + 41}) {
		t.Errorf("flatc reads %s", js)
	}
}
