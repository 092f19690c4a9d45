package jpet

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"

	"github.com/hitflow/hitflow/internal/ctxio"
	"github.com/hitflow/hitflow/internal/prefault"
	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/internal/textscan"
)

// Screen keeps the events whose hits lie on the strips or beyond their
// ends by at most margin times sigma_z (the resolution smears measured hits
// past the ends; the authors' own files have such events) and returns the
// number left out. A negative margin keeps every event.
func (s Scanner) Screen(events []Event, margin float64) (kept []Event, rejected int) {
	if margin < 0 {
		return events, 0
	}
	limit := s.L/2 + margin*s.SigmaZ
	kept = prefault.Make[Event](0, len(events))
	for _, e := range events {
		if math.Abs(e.ZU) > limit || math.Abs(e.ZD) > limit {
			rejected++
			continue
		}
		kept = append(kept, e)
	}
	return kept, rejected
}

// ReadEvents reads the authors' binary event format: little-endian float32
// triples (z_u, z_d, dl), no header. A size that is not a multiple of 12
// bytes or a non-finite value is an error naming the file and the byte
// offset (the events before it are returned). The events of a file take
// the storage its size asks for, once.
func ReadEvents(r io.Reader, name string) ([]Event, error) {
	events := prefault.Make[Event](0, int(ctxio.Size(r)/eventBytes))
	buf := make([]byte, 1<<16/eventBytes*eventBytes)
	var off int64 // of buf's first byte
	for {
		n, err := io.ReadFull(r, buf)
		whole := n / eventBytes * eventBytes
		for at := 0; at < whole; at += eventBytes {
			var v [3]float64
			for i := range v {
				v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[at+4*i:])))
				if math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
					rec := off + int64(at)
					return events, fmt.Errorf("jpet: %s: byte %d: event %d has a non-finite value", name, rec, rec/eventBytes)
				}
			}
			events = append(events, Event{v[0], v[1], v[2]})
		}
		off += int64(n)
		switch {
		case err == nil:
		case err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF):
			return events, fmt.Errorf("jpet: %s: byte %d: %w", name, off, err)
		case n > whole:
			return events, fmt.Errorf("jpet: %s: byte %d: %d trailing bytes; the file is not a whole number of 12-byte events", name, off-int64(n-whole), n-whole)
		default:
			return events, nil
		}
	}
}

// eventBytes is the size of an event of the binary format.
const eventBytes = 12

// WriteEvents writes events in the authors' binary format.
func WriteEvents(w io.Writer, events []Event) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var rec [12]byte
	for _, e := range events {
		for i, v := range [3]float64{e.ZU, e.ZD, e.DL} {
			binary.LittleEndian.PutUint32(rec[4*i:], math.Float32bits(float32(v)))
		}
		if _, err := bw.Write(rec[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadEventsText reads events as text, one "z_u z_d dl" a line; '#'
// starts a comment. Each value is taken to the nearest float32, the
// precision of the binary and Parquet events (a micrometre's ten-
// thousandth in 0.3 m), so that the same events give the same image in
// every format. Errors name the file and line; the events before an
// error are returned with it. The text is parsed in blocks, each cut
// into parts parsed on every core.
func ReadEventsText(r io.Reader, name string) ([]Event, error) {
	return readEventsText(r, name, textBlock, runtime.GOMAXPROCS(0))
}

// textBlock is how much text ReadEventsText parses at a time.
const textBlock = 4 << 20

// readEventsText is ReadEventsText with blocks of about block bytes cut
// into workers parts.
func readEventsText(r io.Reader, name string, block, workers int) ([]Event, error) {
	var rows eventRows
	n, err := textscan.New(r, name, "jpet").ReadRows(&rows, 0, block, workers, ctxio.Size(r), nil)
	return rows[:n], err
}

// eventRows are the events of a text, for textscan.ReadRows.
type eventRows []Event

func (e *eventRows) Resize(n, room int) { *e = textscan.Resize(*e, n, room) }

func (e *eventRows) Move(to, from, n int) { copy((*e)[to:], (*e)[from:from+n]) }

// Parse reads the events of a part's lines into the rows from at on.
func (e *eventRows) Parse(sc *textscan.Scanner, at int) (int, error) {
	dst := (*e)[at:]
	var f [][]byte
	var v [3]float64
	n := 0
	for line := range sc.Lines() {
		if f = lineFields(f, line); len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return n, sc.Errorf("%d values, want z_u z_d dl", len(f))
		}
		if err := finite(sc, v[:], f); err != nil {
			return n, err
		}
		for i, x := range v {
			if v[i] = float64(float32(x)); math.IsInf(v[i], 0) {
				return n, sc.Errorf("%q is beyond the float32 range of the events", f[i])
			}
		}
		dst[n] = Event{v[0], v[1], v[2]}
		n++
	}
	return n, sc.Err()
}

// eachLine calls fn with the fields of every line that has any (see
// lineFields).
func eachLine(r io.Reader, name string, fn func(sc *textscan.Scanner, fields [][]byte) error) error {
	sc := textscan.New(r, name, "jpet")
	var f [][]byte
	for line := range sc.Lines() {
		if f = lineFields(f, line); len(f) > 0 {
			if err := fn(sc, f); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// lineFields returns, in dst, the white-space separated fields of a line
// once its '#' comment is cut.
func lineFields(dst [][]byte, line []byte) [][]byte {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	return textscan.Fields(dst, line, ' ')
}

// finite parses text fields into v as finite numbers; the error names the
// file and line.
func finite(sc *textscan.Scanner, v []float64, fields [][]byte) error {
	for i, s := range fields {
		x, ok := textscan.ParseFloat(s)
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			return sc.Errorf("%q is not a finite number", s)
		}
		v[i] = x
	}
	return nil
}

// WriteEventsText writes events as text, one "z_u z_d dl" line each, with
// the precision of the authors' binary format (the shortest decimal of
// each float32, as %g prints it), formatted on every core.
func WriteEventsText(w io.Writer, events []Event) error {
	bw := bufio.NewWriterSize(w, textparts.BufferSize)
	var text textparts.Parts
	err := text.Write(bw, len(events), func(dst []byte, lo, hi int) []byte {
		for _, e := range events[lo:hi] {
			dst = strconv.AppendFloat(dst, float64(float32(e.ZU)), 'g', -1, 32)
			dst = append(dst, ' ')
			dst = strconv.AppendFloat(dst, float64(float32(e.ZD)), 'g', -1, 32)
			dst = append(dst, ' ')
			dst = strconv.AppendFloat(dst, float64(float32(e.DL)), 'g', -1, 32)
			dst = append(dst, '\n')
		}
		return dst
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
