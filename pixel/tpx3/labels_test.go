package tpx3

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/pixel"
)

func TestLabelledRoundTrip(t *testing.T) {
	var h pixel.Hits
	h.Append(1, 2, 3*pixel.Nanosecond/2, 40)
	h.Append(255, 0, 100*pixel.Nanosecond, 7)
	var buf bytes.Buffer
	w := NewCSVWriter(&buf, true)
	w.WriteLabelled(&h, 0, 1, 5)
	w.WriteLabelled(&h, 1, 2, 9)
	w.Close()
	l, err := ReadLabelled(&buf, "a.csv")
	if err != nil {
		t.Fatal(err)
	}
	if l.Hits.Len() != 2 || l.Hits.X[1] != 255 || l.Hits.ToA[0] != 3*pixel.Nanosecond/2 || l.Hits.ToT[1] != 7 || l.Labels[0] != 5 || l.Labels[1] != 9 {
		t.Fatalf("%+v", l)
	}
}

// TestCSVWriterEnergies: calibrated hits get an energy_kev column before
// the label, which the label and hit readers skip; hits without energies
// after them leave it empty; a file without hits still has its header.
func TestCSVWriterEnergies(t *testing.T) {
	var cal, plain pixel.Hits
	cal.Append(1, 2, 3*pixel.Nanosecond/2, 40)
	cal.Append(255, 0, 100*pixel.Nanosecond, 7)
	cal.E = []float32{12.5, 0.1}
	plain.Append(3, 4, 200*pixel.Nanosecond, 9)
	var buf bytes.Buffer
	w := NewCSVWriter(&buf, true)
	w.WriteLabelled(&cal, 0, 0, 1) // no hits: the header waits
	w.WriteLabelled(&cal, 0, 2, 5)
	w.WriteLabelled(&plain, 0, 1, 6)
	w.Close()
	want := "x,y,toa_ns,tot,energy_kev,cluster\n1,2,1.5,40,12.5,5\n255,0,100,7,0.1,5\n3,4,200,9,,6\n"
	if buf.String() != want {
		t.Fatalf("got %q, want %q", buf.String(), want)
	}
	l, err := ReadLabelled(strings.NewReader(want), "a.csv")
	if err != nil || l.Hits.Len() != 3 || l.Hits.ToT[1] != 7 || l.Labels[2] != 6 {
		t.Fatalf("labels read back: %v, %+v", err, l)
	}
	got, err := readAll(NewCSVReader(strings.NewReader(want), "a.csv"))
	if err != nil || got.Len() != 3 || got.X[2] != 3 || got.ToA[1] != 100*pixel.Nanosecond {
		t.Fatalf("hits read back: %v, %+v", err, got)
	}
	for _, tc := range []struct {
		labelled bool
		want     string
	}{{true, "x,y,toa_ns,tot,cluster\n"}, {false, "x,y,toa_ns,tot\n"}} {
		buf.Reset()
		w := NewCSVWriter(&buf, tc.labelled)
		if err := w.Close(); err != nil || buf.String() != tc.want {
			t.Fatalf("no hits, labelled %v: %q (%v)", tc.labelled, buf.String(), err)
		}
	}
}

func TestLabelledErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "line 0: no header"},
		{"x,y,toa_ns,tot\n1,2,3,4\n", `line 1: header "x,y,toa_ns,tot" has no column "cluster"`},
		// A binary file read as labels: the header quoted is cut short.
		{strings.Repeat("\x00\x01", 300) + "\n", `line 1: header "` + strings.Repeat(`\x00\x01`, 40) + `" has no column "x"`},
		{"cluster,x,y,toa_ns,tot\n1,2,3,4\n", "line 2: 4 fields, want 5"},
		{"x,y,toa_ns,tot,cluster\n1,2,3,4,5\n1,2,3,4,a\n", `line 3: cluster "a" is not an integer`},
		{"x,y,toa_ns,tot,cluster\n1,-2,3,4,5\n", "line 2: pixel"},
	} {
		_, err := ReadLabelled(strings.NewReader(tc.in), "a.csv")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "a.csv") {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestTDCWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewTDCWriter(&buf)
	w.Write([]TDC{{Edge: TDC1Rise, Trigger: 5, Time: 161 * pixel.Nanosecond / 2, Chip: 0}})
	w.Write(nil)
	w.Write([]TDC{{Edge: TDC2Fall, Trigger: 4095, Time: -pixel.Nanosecond / 64, Chip: 3}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "edge,trigger,time_ns,chip\ntdc1_rise,5,80.5,0\ntdc2_fall,4095,-0.015625,3\n"
	if buf.String() != want {
		t.Fatalf("got %q, want %q", buf.String(), want)
	}
}

// TestCSVWriterParts: batches large enough to be formatted in parts on
// several goroutines give the bytes of the same hits written a cluster at
// a time, and of all of them in one call of WriteLabelled; labelled or
// not, with energies or not.
func TestCSVWriterParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // parts on any machine
	r := rand.New(rand.NewPCG(3, 3))
	h := randomHits(r, 40000)
	cl := &pixel.Clusters{}
	cl.Reset()
	for i := 0; i < h.Len(); {
		j := min(h.Len(), i+1+r.IntN(5))
		cl.ID = append(cl.ID, int64(2*cl.Len()+7))
		cl.Members.AppendRange(h, i, j)
		cl.Start = append(cl.Start, j)
		i = j
	}
	if cl.Len() < 4*textparts.MinRows {
		t.Fatalf("%d clusters: too few for four parts", cl.Len())
	}
	for _, calibrated := range []bool{false, true} {
		if calibrated {
			h.E = make([]float32, h.Len())
			for i := range h.E {
				h.E[i] = r.Float32() * 100
			}
			cl.Members.E = h.E
		}
		for _, labelled := range []bool{false, true} {
			var parts, pieces bytes.Buffer
			w := NewCSVWriter(&parts, labelled)
			write := w.Write
			if labelled {
				write = func(*pixel.Hits) error { return w.WriteMembers(cl) }
			}
			if err := write(h); err != nil || w.Close() != nil {
				t.Fatal(err)
			}
			w = NewCSVWriter(&pieces, labelled)
			for i := range cl.Len() {
				label := cl.ID[i]
				if !labelled {
					label = -1
				}
				w.WriteLabelled(h, cl.Start[i], cl.Start[i+1], label)
			}
			w.Close()
			if parts.Len() < 10*h.Len() || !bytes.Equal(parts.Bytes(), pieces.Bytes()) {
				t.Errorf("calibrated %v, labelled %v: %d bytes in parts, %d a cluster at a time", calibrated, labelled, parts.Len(), pieces.Len())
			}
			if labelled {
				continue
			}
			var whole bytes.Buffer // all hits in one call, written in pieces
			w = NewCSVWriter(&whole, false)
			w.WriteLabelled(h, 0, h.Len(), 1)
			w.Close()
			if !bytes.Equal(whole.Bytes(), parts.Bytes()) {
				t.Errorf("calibrated %v: %d bytes in one call, %d in parts", calibrated, whole.Len(), parts.Len())
			}
		}
	}
}

// TestLabelledFastPath: lines of plain decimals (the fast path) read as
// the same lines with a column of text added (the field parser): the
// same hits, labels and errors, for fields at the fast path's edges.
func TestLabelledFastPath(t *testing.T) {
	forms := []string{"7", "+7", "-7", " 7 ", "7.0", "7.5", "007", "65535", "65536", "123456789012345678", "1e2", "", "\"7\""}
	times := []string{"2481.25", "18599573194910.6", "0.015625", "-3", "1e3", "72057594037927937", "5."}
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 5))
		var fast, slow strings.Builder
		fast.WriteString("x,y,toa_ns,tot,cluster\n")
		slow.WriteString("x,y,toa_ns,tot,cluster,note\n")
		for range 20 {
			field := func() string {
				if r.IntN(6) == 0 {
					return forms[r.IntN(len(forms))]
				}
				return forms[0]
			}
			ns := times[0]
			if r.IntN(4) == 0 {
				ns = times[r.IntN(len(times))]
			}
			line := strings.Join([]string{field(), field(), ns, field(), field()}, ",")
			fast.WriteString(line + "\n")
			slow.WriteString(line + ",z\n")
		}
		a, errA := ReadLabelled(strings.NewReader(fast.String()), "f.csv")
		b, errB := ReadLabelled(strings.NewReader(slow.String()), "f.csv")
		if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() ||
			!slices.Equal(hitsOf(&a.Hits), hitsOf(&b.Hits)) || !slices.Equal(a.Hits.ToA, b.Hits.ToA) || !slices.Equal(a.Labels, b.Labels) {
			t.Fatalf("seed %d: %d hits, %v; field parser: %d hits, %v\n%s", seed, a.Hits.Len(), errA, b.Hits.Len(), errB, fast.String())
		}
	}
}

// TestLabelledInParts: a label file read in blocks of any size, each cut
// into any number of parts, gives the hits and labels (and the first
// error, with the hits before it) of the file read in one part.
func TestLabelledInParts(t *testing.T) {
	for seed := range 100 {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		var text strings.Builder
		text.WriteString("# made by a test\n\nx,y,toa_ns,tot,cluster,energy_kev\n")
		for i := range r.IntN(400) {
			switch r.IntN(15) {
			case 0:
				text.WriteString("# a comment\n")
			case 1:
				text.WriteString("\n")
			case 2:
				if r.IntN(3) == 0 {
					text.WriteString([]string{"1,2\n", "1,2,x,4,5,6\n", "70000,2,3,4,5,6\n"}[r.IntN(3)])
					continue
				}
			case 3:
				text.WriteString(`"7",8,9.5,10,11,` + "\n") // the field parser's
				continue
			}
			fmt.Fprintf(&text, "%d,%d,%d.%d,%d,%d,%d\n", r.IntN(256), r.IntN(256), r.IntN(1e6), r.IntN(100), r.IntN(1000), i, r.IntN(50))
		}
		want, wantErr := readLabelled(strings.NewReader(text.String()), "l.csv", 1<<30, 1)
		for _, block := range []int{1, 31, 600} {
			for _, workers := range []int{1, 2, 3, 7} {
				got, err := readLabelled(strings.NewReader(text.String()), "l.csv", block, workers)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Hits.X, want.Hits.X) ||
					!slices.Equal(got.Hits.Y, want.Hits.Y) || !slices.Equal(got.Hits.ToA, want.Hits.ToA) || !slices.Equal(got.Hits.ToT, want.Hits.ToT) {
					t.Fatalf("seed %d, blocks of %d bytes in %d parts: %d hits, %v; want %d, %v", seed, block, workers, len(got.Labels), err, len(want.Labels), wantErr)
				}
			}
		}
	}
}
