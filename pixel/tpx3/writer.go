package tpx3

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"

	"github.com/hitflow/hitflow/internal/textfmt"
	"github.com/hitflow/hitflow/internal/textparts"
	"github.com/hitflow/hitflow/pixel"
)

// HitWriter writes hits in one of the formats the readers understand.
type HitWriter interface {
	Write(h *pixel.Hits) error
	// Flush writes what the writer holds, except the packets of a .tpx3
	// chunk not yet full: a stream flushed whenever a chunk is full
	// has the chunks of one written at once.
	Flush() error
	Close() error // flushes; does not close the underlying writer
}

// NewHitWriter returns a writer for format f (not Auto).
func NewHitWriter(w io.Writer, f Format) (HitWriter, error) {
	switch f {
	case TPX3:
		return &rawWriter{w: bufio.NewWriterSize(w, 1<<20)}, nil
	case T3PA:
		bw := bufio.NewWriterSize(w, 1<<20)
		_, err := bw.WriteString("Index\tMatrix Index\tToA\tToT\tFToA\tOverflow\n")
		return &t3paWriter{w: bw}, err
	case CSV:
		return NewCSVWriter(w, false), nil
	}
	return nil, fmt.Errorf("tpx3: cannot write format %v", f)
}

// timepixTime splits a time into the coarse 25 ns counter and the FToA
// (1.5625 ns steps subtracted from it), or fails when the time is negative
// or not on the 1.5625 ns grid.
func timepixTime(t pixel.Time) (coarse int64, ftoa uint64, err error) {
	if t < 0 || t%100 != 0 {
		return 0, 0, fmt.Errorf("time %v ns is not a non-negative multiple of 1.5625 ns", t.Ns())
	}
	fine := int64(t / 100)
	coarse = (fine + 15) / 16
	return coarse, uint64(coarse*16 - fine), nil
}

// rawWriter writes chip-0 .tpx3 chunks of up to 8191 pixel packets.
type rawWriter struct {
	w     *bufio.Writer
	chunk []byte
}

// ChunkPackets is the number of pixel packets in each .tpx3 chunk written
// but the last.
const ChunkPackets = 8191

func (r *rawWriter) Write(h *pixel.Hits) error {
	for i := range h.ToA {
		x, y, tot := uint64(h.X[i]), uint64(h.Y[i]), uint64(h.ToT[i])
		if x > 255 || y > 255 || tot > 1023 {
			return fmt.Errorf("tpx3: hit %d at (%d, %d) with ToT %d does not fit one Timepix3 chip", i, x, y, tot)
		}
		coarse, ftoa, err := timepixTime(h.ToA[i])
		if err != nil {
			return fmt.Errorf("tpx3: hit %d: %w", i, err)
		}
		c30 := uint64(coarse) & (1<<30 - 1)
		addr := (x&^1)<<8 | (y&^3)<<1 | (x&1)<<2 | y&3
		word := 0xB<<60 | addr<<44 | (c30&0x3FFF)<<30 | tot<<20 | ftoa<<16 | c30>>14
		r.chunk = binary.LittleEndian.AppendUint64(r.chunk, word)
		if len(r.chunk) == 8*ChunkPackets {
			if err := r.flushChunk(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *rawWriter) flushChunk() error {
	if len(r.chunk) == 0 {
		return nil
	}
	hdr := [8]byte{'T', 'P', 'X', '3', 0, 0}
	binary.LittleEndian.PutUint16(hdr[6:], uint16(len(r.chunk)))
	r.w.Write(hdr[:])
	_, err := r.w.Write(r.chunk)
	r.chunk = r.chunk[:0]
	return err
}

func (r *rawWriter) Flush() error { return r.w.Flush() }

// ToAPeriod is the span of a pixel packet's 14-bit ToA counter of 25 ns,
// 409.6 us: hits later by a multiple of it have the same packets but for
// the 16 bits of SPIDR time above the counter.
const ToAPeriod = 1 << 14 * 25 * pixel.Nanosecond

// Later makes the pixel packets of the .tpx3 chunks in raw (as written
// here) those of their hits later by d, a non-negative multiple of
// ToAPeriod, in place: the bytes the hits' times plus d would be written
// as, without encoding them again. A run served again and again later in
// time (online.Serve) costs an addition a packet. Bytes that are not
// whole chunks of pixel packets are an error, and left as they were.
func Later(raw []byte, d pixel.Time) error {
	if d < 0 || d%ToAPeriod != 0 {
		return fmt.Errorf("tpx3: a shift of %v ns is not a non-negative multiple of the ToA's period, %v ns", d.Ns(), ToAPeriod.Ns())
	}
	if err := checkPixelChunks(raw); err != nil {
		return err
	}
	ticks := uint64(d / ToAPeriod) // modulo 2^16 below, as the SPIDR time wraps
	for pos := 0; pos < len(raw); {
		end := pos + 8 + int(binary.LittleEndian.Uint16(raw[pos+6:]))
		for i := pos + 8; i < end; i += 8 {
			w := binary.LittleEndian.Uint64(raw[i:])
			binary.LittleEndian.PutUint64(raw[i:], w&^0xFFFF|(w+ticks)&0xFFFF)
		}
		pos = end
	}
	return nil
}

// checkPixelChunks reports the first byte of raw that is not where whole
// .tpx3 chunks of pixel packets would have it.
func checkPixelChunks(raw []byte) error {
	for pos := 0; pos < len(raw); {
		if len(raw)-pos < 8 || string(raw[pos:pos+4]) != "TPX3" {
			return fmt.Errorf("tpx3: no chunk header at byte %d", pos)
		}
		end := pos + 8 + int(binary.LittleEndian.Uint16(raw[pos+6:]))
		if end > len(raw) || (end-pos)%8 != 0 {
			return fmt.Errorf("tpx3: the chunk at byte %d ends past the data or inside a packet", pos)
		}
		for i := pos + 8; i < end; i += 8 {
			if raw[i+7]>>4 != 0xB {
				return fmt.Errorf("tpx3: byte %d: not a pixel packet", i)
			}
		}
		pos = end
	}
	return nil
}

func (r *rawWriter) Close() error {
	if err := r.flushChunk(); err != nil {
		return err
	}
	return r.w.Flush()
}

// t3paWriter writes Pixet text with Matrix Index = y*256 + x.
type t3paWriter struct {
	w    *bufio.Writer
	n    int64
	line []byte
}

func (t *t3paWriter) Write(h *pixel.Hits) error {
	for i := range h.ToA {
		if h.X[i] > 255 || h.Y[i] > 255 {
			return fmt.Errorf("t3pa: hit %d at (%d, %d) is outside one chip", i, h.X[i], h.Y[i])
		}
		coarse, ftoa, err := timepixTime(h.ToA[i])
		if err != nil {
			return fmt.Errorf("t3pa: hit %d: %w", i, err)
		}
		l := textfmt.AppendInt(t.line[:0], t.n)
		l = append(l, '\t')
		l = textfmt.AppendInt(l, int64(h.Y[i])*256+int64(h.X[i]))
		l = append(l, '\t')
		l = textfmt.AppendInt(l, coarse)
		l = append(l, '\t')
		l = textfmt.AppendUint(l, uint64(h.ToT[i]))
		l = append(l, '\t')
		l = textfmt.AppendUint(l, ftoa)
		l = append(l, "\t0\n"...)
		t.line = l
		t.n++
		if _, err := t.w.Write(l); err != nil {
			return err
		}
	}
	return nil
}

func (t *t3paWriter) Flush() error { return t.w.Flush() }

func (t *t3paWriter) Close() error { return t.w.Flush() }

// CSVWriter writes hits as x,y,toa_ns,tot, then energy_kev when the hits
// are calibrated, then cluster when labelled. Large batches are formatted
// on several goroutines (see textparts).
type CSVWriter struct {
	w        *bufio.Writer
	labelled bool
	started  bool // the header is written
	energy   bool // the header has energy_kev
	text     textparts.Parts
	line     []byte // WriteLabelled's
}

// NewCSVWriter returns a writer of hits. The header follows the first
// hits written (with energies or not), or Close when there are none.
func NewCSVWriter(w io.Writer, labelled bool) *CSVWriter {
	return &CSVWriter{w: bufio.NewWriterSize(w, textparts.BufferSize), labelled: labelled}
}

// start writes the header, with energies for calibrated hits, unless it
// is already written.
func (c *CSVWriter) start(calibrated bool) error {
	if c.started {
		return nil
	}
	c.started, c.energy = true, calibrated
	hdr := "x,y,toa_ns,tot"
	if c.energy {
		hdr += ",energy_kev"
	}
	if c.labelled {
		hdr += ",cluster"
	}
	_, err := c.w.WriteString(hdr + "\n")
	return err
}

// Write writes hits without labels.
func (c *CSVWriter) Write(h *pixel.Hits) error {
	if h.Len() == 0 {
		return nil
	}
	if err := c.start(h.Calibrated()); err != nil {
		return err
	}
	return c.text.Write(c.w, h.Len(), func(dst []byte, lo, hi int) []byte { return c.appendRows(dst, h, lo, hi, -1) })
}

// WriteLabelled writes hits [from, to) of h with the cluster id label; a
// writer made without labels leaves the label out. Hits without energies
// after calibrated ones leave the energy empty.
func (c *CSVWriter) WriteLabelled(h *pixel.Hits, from, to int, label int64) error {
	if from == to {
		return nil
	}
	if err := c.start(h.Calibrated()); err != nil {
		return err
	}
	for from < to { // in pieces, so that the line buffer stays small
		end := min(to, from+textparts.MinRows)
		c.line = c.appendRows(c.line[:0], h, from, end, label)
		if _, err := c.w.Write(c.line); err != nil {
			return err
		}
		from = end
	}
	return nil
}

// WriteMembers writes the hits of every cluster of c, each with its id.
func (c *CSVWriter) WriteMembers(cl *pixel.Clusters) error {
	if !cl.HasMembers() {
		return fmt.Errorf("tpx3: %w", pixel.ErrNoMembers)
	}
	m := &cl.Members
	if m.Len() == 0 {
		return nil
	}
	if err := c.start(m.Calibrated()); err != nil {
		return err
	}
	return c.text.Write(c.w, cl.Len(), func(dst []byte, lo, hi int) []byte {
		for i := lo; i < hi; i++ {
			dst = c.appendRows(dst, m, cl.Start[i], cl.Start[i+1], cl.ID[i])
		}
		return dst
	})
}

// appendRows appends the lines of hits [from, to) of h with the cluster
// id label (when the writer is labelled) to l.
func (c *CSVWriter) appendRows(l []byte, h *pixel.Hits, from, to int, label int64) []byte {
	withE := c.energy && h.Calibrated()
	for i := from; i < to; i++ {
		l = textfmt.AppendUint(l, uint64(h.X[i]))
		l = append(l, ',')
		l = textfmt.AppendUint(l, uint64(h.Y[i]))
		l = append(l, ',')
		l = pixel.AppendNs(l, h.ToA[i])
		l = append(l, ',')
		l = textfmt.AppendUint(l, uint64(h.ToT[i]))
		if c.energy {
			l = append(l, ',')
			if withE {
				l = strconv.AppendFloat(l, float64(h.E[i]), 'g', -1, 32)
			}
		}
		if c.labelled {
			l = append(l, ',')
			l = textfmt.AppendInt(l, label)
		}
		l = append(l, '\n')
	}
	return l
}

// Flush writes the lines held.
func (c *CSVWriter) Flush() error { return c.w.Flush() }

// Close writes the header if no hit came, and flushes.
func (c *CSVWriter) Close() error {
	if err := c.start(false); err != nil {
		return err
	}
	return c.w.Flush()
}

// TDCWriter writes TDC packets as CSV: edge,trigger,time_ns,chip, the
// time on the hits' axis.
type TDCWriter struct {
	w    *bufio.Writer
	line []byte
	err  error
}

// NewTDCWriter returns a writer of TDC packets, header written.
func NewTDCWriter(w io.Writer) *TDCWriter {
	t := &TDCWriter{w: bufio.NewWriterSize(w, 1<<16)}
	_, t.err = t.w.WriteString("edge,trigger,time_ns,chip\n")
	return t
}

// Write writes the packets, or returns the first error of the writer.
func (t *TDCWriter) Write(tdcs []TDC) error {
	for _, d := range tdcs {
		if t.err != nil {
			break
		}
		l := append(t.line[:0], d.Edge.String()...)
		l = append(l, ',')
		l = textfmt.AppendUint(l, uint64(d.Trigger))
		l = append(l, ',')
		l = pixel.AppendNs(l, d.Time)
		l = append(l, ',')
		l = textfmt.AppendUint(l, uint64(d.Chip))
		l = append(l, '\n')
		t.line = l
		_, t.err = t.w.Write(l)
	}
	return t.err
}

// Close flushes.
func (t *TDCWriter) Close() error {
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}
