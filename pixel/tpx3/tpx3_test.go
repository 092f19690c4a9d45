package tpx3

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

const dataDir = "../../../shared/data/tpx3"

// openShared opens a file of ../shared/data or skips the test.
func openShared(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(dataDir, name))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("shared data %s not present; skipping", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// readAll drains a reader, returning all hits and the first error that is
// not io.EOF.
func readAll(r Reader) (pixel.Hits, error) {
	var all, batch pixel.Hits
	for {
		err := r.Read(&batch)
		all.AppendRange(&batch, 0, batch.Len())
		if err == io.EOF {
			return all, nil
		}
		if err != nil {
			return all, err
		}
	}
}

func mustLayout(t testing.TB, name string) Layout {
	l, err := LayoutByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRealFilesCounts(t *testing.T) {
	for _, tc := range []struct {
		file              string
		hits, tdc, chunks int64
		control           int64
	}{
		{"suann_socket_background_serval32.tpx3", 98548, 28800, 81399, -1},
		{"greg_220ms_TDC_GDC_enabled_20230214_3.tpx3", 365, 13291, 20214, 856 + 856 + 6848},
		{"rollover_test_data.tpx3", 26, 0, 1, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := NewRawReader(openShared(t, tc.file), tc.file, mustLayout(t, "row"))
			var batch pixel.Hits
			var tdcs []TDC
			var hits int64
			for {
				err := r.Read(&batch)
				hits += int64(batch.Len())
				tdcs = append(tdcs, r.TDC()...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			st := r.Stats()
			if hits != tc.hits || st.Hits != tc.hits || st.TDC != tc.tdc || int64(len(tdcs)) != tc.tdc || st.Chunks != tc.chunks || st.Unknown != 0 || st.OutOfRange != 0 {
				t.Fatalf("stats %+v, %d hits delivered, %d TDC", st, hits, len(tdcs))
			}
			if tc.control >= 0 && st.Control != tc.control {
				t.Errorf("control packets %d, want %d", st.Control, tc.control)
			}
			fi, _ := os.Stat(filepath.Join(dataDir, tc.file))
			if st.Bytes != fi.Size() {
				t.Errorf("consumed %d bytes of %d", st.Bytes, fi.Size())
			}
		})
	}
}

// TestGregTDCEdges pins what the TDC-enabled file holds: TDC1 rising edges
// 16.67 ms apart (60 Hz) with a trigger counter that steps by one, except
// once: the counter restarts at 1 just after the 35-bit TDC clock wraps
// (107.37 s), where the time must go on increasing. One packet (index
// 11426) carries its predecessor's time stamp (0.78 ns earlier) with the
// next trigger number, a readout quirk kept as it is in the file: the
// decoder must not invent times.
func TestGregTDCEdges(t *testing.T) {
	r := NewRawReader(openShared(t, "greg_220ms_TDC_GDC_enabled_20230214_3.tpx3"), "greg", mustLayout(t, "row"))
	var batch pixel.Hits
	var tdcs []TDC
	for {
		err := r.Read(&batch)
		tdcs = append(tdcs, r.TDC()...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	restarts := 0
	for i, d := range tdcs {
		if d.Edge != TDC1Rise {
			t.Fatalf("TDC %d edge %v", i, d.Edge)
		}
		if i > 0 && d.Trigger != (tdcs[i-1].Trigger+1)&0xFFF {
			if d.Trigger != 1 || d.Time < pixel.Time(1<<35)*200 {
				t.Fatalf("TDC %d trigger %d after %d at %v ns", i, d.Trigger, tdcs[i-1].Trigger, d.Time.Ns())
			}
			restarts++
			continue
		}
		if i == 0 {
			continue
		}
		gap := d.Time - tdcs[i-1].Time
		switch {
		case i == 11426 && gap == -50: // -0.78125 ns
		case i == 11427 && gap > 33335*pixel.Microsecond && gap < 33336*pixel.Microsecond:
		case gap < 16666*pixel.Microsecond || gap > 16668*pixel.Microsecond:
			t.Fatalf("TDC %d %v ns after the previous", i, gap.Ns())
		}
	}
	if restarts != 1 {
		t.Fatalf("%d trigger restarts, want 1", restarts)
	}
}

// TestRolloverFile: the file passes over the 30-bit wrap of the coarse
// counter three times (1006649343 .. 1073741823, then 262143 .. 268435455),
// jumping back by seconds between passes, so its order cannot be monotonic.
// What must hold: every hit after the wrap extends to coarse + 2^30, later
// than every hit before it, and the time-sorted stream is monotonic.
func TestRolloverFile(t *testing.T) {
	const name = "rollover_test_data.tpx3"
	raw, err := io.ReadAll(openShared(t, name))
	if err != nil {
		t.Fatal(err)
	}
	hits, err := readAll(NewRawReader(bytes.NewReader(raw), name, mustLayout(t, "single")))
	if err != nil {
		t.Fatal(err)
	}
	if hits.Len() != 26 {
		t.Fatalf("%d hits", hits.Len())
	}
	sawWrap := false
	for i := range hits.Len() {
		w := binary.LittleEndian.Uint64(raw[8+8*i:])
		coarse := int64((w&0xFFFF)<<14 | (w>>30)&0x3FFF)
		if coarse < 1<<29 {
			coarse += 1 << 30
			sawWrap = true
		}
		if want := pixel.Time(coarse*1600 - 15*100); hits.ToA[i] != want {
			t.Fatalf("hit %d at %v ns, want %v ns", i, hits.ToA[i].Ns(), want.Ns())
		}
		if hits.X[i] != 153 || hits.Y[i] != 58 || hits.ToT[i] != 1023 {
			t.Fatalf("hit %d at (%d,%d) ToT %d", i, hits.X[i], hits.Y[i], hits.ToT[i])
		}
	}
	if !sawWrap {
		t.Fatal("no hit after the wrap")
	}
	s, err := pixel.NewSorter(30*pixel.Second, 60*pixel.Second)
	if err != nil {
		t.Fatal(err)
	}
	out := s.Push(&hits)
	var sorted pixel.Hits
	sorted.AppendRange(out, 0, out.Len())
	out = s.Flush()
	sorted.AppendRange(out, 0, out.Len())
	if sorted.Len() != 26 || !slices.IsSorted(sorted.ToA) {
		t.Fatalf("sorted stream of %d hits not monotonic", sorted.Len())
	}
}

// randomHits makes hits on one chip on the 1.5625 ns grid.
func randomHits(r *rand.Rand, n int) *pixel.Hits {
	var h pixel.Hits
	t := pixel.Time(r.Int64N(1 << 40))
	t -= t % 100
	for range n {
		t += pixel.Time(r.Int64N(5000)) * 100
		h.Append(uint16(r.IntN(256)), uint16(r.IntN(256)), t, uint16(r.IntN(1024)))
	}
	return &h
}

// encode writes the hits in format f.
func encode(t *testing.T, f Format, h *pixel.Hits) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewHitWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(h); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteReadRoundTrip(t *testing.T) {
	for _, f := range []Format{TPX3, T3PA, CSV} {
		t.Run(f.String(), func(t *testing.T) {
			for seed := range 20 {
				r := rand.New(rand.NewPCG(uint64(seed), 7))
				want := randomHits(r, r.IntN(20000))
				if seed == 1 { // cross the 30-bit wrap of the coarse counter
					for i := range want.ToA {
						want.ToA[i] = (1<<30-50)*1600 + pixel.Time(i)*100*16*3
					}
				}
				buf := bytes.NewBuffer(encode(t, f, want))
				rd, err := NewReader(buf, "roundtrip."+f.String(), Options{Layout: mustLayout(t, "single"), Width: 256, Height: 256})
				if err != nil {
					t.Fatal(err)
				}
				got, err := readAll(rd)
				if err != nil {
					t.Fatal(err)
				}
				if f == TPX3 { // the raw format keeps 30 bits: compare modulo the wrap
					period := pixel.Time(1<<30) * 1600
					if got.Len() > 0 {
						shift := want.ToA[0] - got.ToA[0]
						if shift%period != 0 {
							t.Fatalf("times shifted by %v ns, not whole wraps", shift.Ns())
						}
						for i := range got.ToA {
							got.ToA[i] += shift
						}
					}
				}
				if !slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) || !slices.Equal(got.ToA, want.ToA) || !slices.Equal(got.ToT, want.ToT) {
					t.Fatalf("seed %d: %d hits came back different from %d written", seed, got.Len(), want.Len())
				}
				if st := rd.Stats(); st.Hits != int64(want.Len()) {
					t.Fatalf("stats count %d hits", st.Hits)
				}
			}
		})
	}
}

// TestRawBatch: a raw reader delivers batches of the size asked for
// (Options.Batch, else DefaultBatch), the last one what is left.
func TestRawBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	hits := randomHits(r, 2*DefaultBatch+DefaultBatch/2)
	data := encode(t, TPX3, hits)
	for _, batch := range []int{0, 1000, 1} {
		rd, err := NewReader(bytes.NewReader(data), "b.tpx3", Options{Layout: mustLayout(t, "single"), Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		want := cmp.Or(batch, DefaultBatch)
		var h pixel.Hits
		for left := hits.Len(); left > 0; left -= h.Len() {
			if err := rd.Read(&h); err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if h.Len() != min(want, left) {
				t.Fatalf("batch %d: a batch of %d hits with %d left", batch, h.Len(), left)
			}
		}
	}
}

func chunk(chip byte, words ...uint64) []byte {
	b := []byte{'T', 'P', 'X', '3', chip, 0, 0, 0}
	binary.LittleEndian.PutUint16(b[6:], uint16(8*len(words)))
	for _, w := range words {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

const pixelWord = 0xB<<60 | 0x1234<<44 | 5<<30 | 10<<20 | 3<<16 | 7

func TestRawErrors(t *testing.T) {
	good := append(chunk(0, pixelWord, pixelWord), chunk(0, pixelWord)...)
	for _, tc := range []struct {
		name  string
		data  []byte
		hits  int
		wants string
	}{
		{"truncated chunk", good[:len(good)-3], 2, "byte 32: chunk truncated, 8 of its bytes missing"},
		{"truncated header", good[:27], 2, "byte 24: chunk header truncated after 3 bytes"},
		{"bad magic", append(slices.Clone(good[:24]), []byte("TPX4\x00\x00\x08\x00")...), 2, `byte 24: chunk header "TPX4" is not "TPX3"`},
		{"odd size", append(slices.Clone(good[:24]), []byte("TPX3\x00\x00\x07\x00")...), 2, "byte 24: chunk size 7 is not a multiple of 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := readAll(NewRawReader(bytes.NewReader(tc.data), "f.tpx3", mustLayout(t, "single")))
			if err == nil || !strings.Contains(err.Error(), "tpx3: f.tpx3: "+tc.wants) {
				t.Fatalf("error %v, want %q", err, tc.wants)
			}
			if hits.Len() != tc.hits {
				t.Fatalf("%d hits before the error, want %d", hits.Len(), tc.hits)
			}
		})
	}
}

func TestRawPacketKinds(t *testing.T) {
	data := chunk(0,
		pixelWord,
		0x6F<<56|5<<44|(800+3)<<9|4<<5, // TDC1 rise, trigger 5, 803 * 3.125 ns, fine 4
		0x6B<<56|6<<44|(808)<<9|1<<5,   // TDC2 fall
		0x61<<56,                       // TDC with an unknown edge
		0x44<<56, 0x45<<56, 0x50<<56, 0x5C<<56, 0x5F<<56, 0x5A<<56, 0x71A0<<48,
		0x2<<60, // unknown type
	)
	data = append(data, chunk(7, pixelWord)...) // chip outside the single layout
	r := NewRawReader(bytes.NewReader(data), "kinds", mustLayout(t, "single"))
	var h pixel.Hits
	if err := r.Read(&h); err != io.EOF {
		t.Fatal(err)
	}
	tdc := r.TDC()
	st := r.Stats()
	if st.Hits != 1 || st.TDC != 2 || st.Control != 7 || st.Unknown != 2 || st.OutOfRange != 1 || st.Chunks != 2 {
		t.Fatalf("stats %+v", st)
	}
	// Pixel: coarse 7<<14|5 ticks; the TDC clock follows it.
	want := []TDC{
		{Edge: TDC1Rise, Trigger: 5, Time: 100*1600 + 3*200 + (3*200+6)/12},
		{Edge: TDC2Fall, Trigger: 6, Time: 101 * 1600},
	}
	if !slices.Equal(tdc, want) {
		t.Fatalf("TDC %+v, want %+v", tdc, want)
	}
}

func TestPixelAddress(t *testing.T) {
	// Every pixel of a chip encodes and decodes to itself, and the layouts
	// place chips where their doc says.
	var h pixel.Hits
	for y := range 256 {
		for x := range 256 {
			h.Append(uint16(x), uint16(y), pixel.Time(100*(y*256+x)), uint16(x%1024))
		}
	}
	var buf bytes.Buffer
	w, _ := NewHitWriter(&buf, TPX3)
	if err := w.Write(&h); err != nil {
		t.Fatal(err)
	}
	w.Close()
	raw := buf.Bytes()
	for _, tc := range []struct {
		layout string
		chip   byte
		x, y   func(x, y uint16) uint16
	}{
		{"row", 2, func(x, y uint16) uint16 { return 514 + x }, func(x, y uint16) uint16 { return y }},
		{"quad", 0, func(x, y uint16) uint16 { return 260 + x }, func(x, y uint16) uint16 { return y }},
		{"quad", 1, func(x, y uint16) uint16 { return 260 + 255 - x }, func(x, y uint16) uint16 { return 260 + 255 - y }},
		{"quad", 2, func(x, y uint16) uint16 { return 255 - x }, func(x, y uint16) uint16 { return 260 + 255 - y }},
		{"quad", 3, func(x, y uint16) uint16 { return x }, func(x, y uint16) uint16 { return y }},
	} {
		data := slices.Clone(raw)
		for off := 0; off < len(data); off += 8 + int(binary.LittleEndian.Uint16(data[off+6:])) {
			data[off+4] = tc.chip
		}
		got, err := readAll(NewRawReader(bytes.NewReader(data), "all", mustLayout(t, tc.layout)))
		if err != nil || got.Len() != h.Len() {
			t.Fatalf("%v, %d hits", err, got.Len())
		}
		for i := range got.ToA {
			if got.X[i] != tc.x(h.X[i], h.Y[i]) || got.Y[i] != tc.y(h.X[i], h.Y[i]) || got.ToA[i] != h.ToA[i] {
				t.Fatalf("%s chip %d: (%d,%d) came back as (%d,%d)", tc.layout, tc.chip, h.X[i], h.Y[i], got.X[i], got.Y[i])
			}
		}
	}
}

// TestResetGoesOn: a stream cut into messages at chunk boundaries,
// decoded message by message (Reset) and handed to a second reader half
// way (SetClock from the first's Clock), gives the hits of one reader,
// across a wrap of the coarse counter.
func TestResetGoesOn(t *testing.T) {
	want := &pixel.Hits{}
	for i := range 80000 {
		want.Append(uint16(i%256), uint16(i/256%256), (1<<30-40000*3)*1600+pixel.Time(i)*100*16*3, uint16(i%1024))
	}
	raw := encode(t, TPX3, want)
	layout := mustLayout(t, "single")
	one, err := readAll(NewRawReader(bytes.NewReader(raw), "one", layout))
	if err != nil {
		t.Fatal(err)
	}
	var msgs [][]byte
	for b := raw; len(b) > 0; {
		n := 8 + int(binary.LittleEndian.Uint16(b[6:]))
		msgs = append(msgs, b[:n])
		b = b[n:]
	}
	if len(msgs) < 4 {
		t.Fatalf("%d chunks: too few to cut", len(msgs))
	}
	var got pixel.Hits
	d := NewRawReader(nil, "", layout)
	for i, m := range msgs {
		if i == len(msgs)/2 {
			next := NewRawReader(nil, "", layout)
			next.SetClock(d.Clock())
			d = next
		}
		d.Reset(bytes.NewReader(m), fmt.Sprint("message ", i))
		h, err := readAll(d)
		if err != nil {
			t.Fatal(err)
		}
		got.AppendRange(&h, 0, h.Len())
	}
	if !slices.Equal(got.ToA, one.ToA) || !slices.Equal(got.X, one.X) || !slices.Equal(got.ToT, one.ToT) || one.ToA[one.Len()-1] < 1<<30*1600 {
		t.Fatalf("%d hits message by message, %d in one go, or no wrap", got.Len(), one.Len())
	}
}

// Later gives the bytes of the hits written later, for shifts of every
// size (the SPIDR time wrapping past 2^16 periods too), and refuses a
// shift off the ToA's period and bytes that are not pixel chunks.
func TestLater(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	h := randomHits(r, 20_000) // chunks of 8191 packets and a shorter one
	raw := encode(t, TPX3, h)
	for _, periods := range []int64{0, 1, 7, 1<<16 - 1, 1 << 16, 1<<16 + 3, 123457} {
		d := pixel.Time(periods) * ToAPeriod
		shifted := &pixel.Hits{}
		for i := range h.Len() {
			shifted.Append(h.X[i], h.Y[i], h.ToA[i]+d, h.ToT[i])
		}
		want := encode(t, TPX3, shifted)
		got := bytes.Clone(raw)
		if err := Later(got, d); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d periods later: not the bytes of the hits written later", periods)
		}
	}
	if ToAPeriod != 409_600*pixel.Nanosecond {
		t.Errorf("ToAPeriod %v ns", ToAPeriod.Ns())
	}
	for _, tc := range []struct {
		raw  []byte
		d    pixel.Time
		want string
	}{
		{raw, ToAPeriod + 100, "not a non-negative multiple"},
		{raw, -ToAPeriod, "not a non-negative multiple"},
		{raw[:len(raw)-8], ToAPeriod, "ends past the data"},
		{append(bytes.Clone(raw), 'x'), ToAPeriod, "no chunk header at byte"},
		{append([]byte("TPX3\x00\x00\x08\x00"), 0, 0, 0, 0, 0, 0, 0, 0x60), ToAPeriod, "byte 8: not a pixel packet"},
		{append(bytes.Clone(raw), append([]byte("TPX3\x00\x00\x08\x00"), 0, 0, 0, 0, 0, 0, 0, 0x60)...), ToAPeriod, fmt.Sprintf("byte %d: not a pixel packet", len(raw)+8)},
	} {
		b := bytes.Clone(tc.raw)
		if err := Later(b, tc.d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Later(%d bytes, %v): %v, want an error with %q", len(tc.raw), tc.d, err, tc.want)
		}
		if !bytes.Equal(b, tc.raw) {
			t.Errorf("Later(%d bytes, %v) failed and changed them", len(tc.raw), tc.d)
		}
	}
}
