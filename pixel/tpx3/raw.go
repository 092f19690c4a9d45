package tpx3

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/hitflow/hitflow/pixel"
)

// TDCEdge says which TDC input and edge a TDC packet records.
type TDCEdge uint8

// TDC edges, from the packet's sub-type nibble.
const (
	TDC1Rise TDCEdge = 0xF
	TDC1Fall TDCEdge = 0xA
	TDC2Rise TDCEdge = 0xE
	TDC2Fall TDCEdge = 0xB
)

func (e TDCEdge) String() string {
	switch e {
	case TDC1Rise:
		return "tdc1_rise"
	case TDC1Fall:
		return "tdc1_fall"
	case TDC2Rise:
		return "tdc2_rise"
	case TDC2Fall:
		return "tdc2_fall"
	}
	return fmt.Sprintf("tdc_%x", uint8(e))
}

// TDC is one decoded TDC packet, on the same clock as the pixel hits.
type TDC struct {
	Edge    TDCEdge
	Chip    uint8
	Trigger uint16 // trigger counter, 12 bits
	Time    pixel.Time
}

// clock extends the wrapping time stamps of a stream onto one axis. Its
// reference is the latest extended time in 25 ns ticks.
type clock struct {
	ref   int64
	begun bool
}

// extend returns the value v of a bits-wide counter of 25 ns ticks as the
// extended tick closest to the reference, and moves the reference there.
func (c *clock) extend(v uint64, bits uint) int64 {
	if !c.begun {
		c.begun, c.ref = true, int64(v)
		return c.ref
	}
	mask := uint64(1)<<bits - 1
	d := int64((v - uint64(c.ref)) & mask)
	if d >= 1<<(bits-1) {
		d -= 1 << bits
	}
	c.ref += d
	return c.ref
}

// RawReader decodes a SPIDR/SERVAL .tpx3 stream.
type RawReader struct {
	r      io.Reader
	name   string
	layout Layout
	batch  int // hits a Read delivers (see SetBatch)

	buf    []byte
	lo, hi int   // undecoded bytes are buf[lo:hi]
	base   int64 // stream offset of buf[0]
	eof    bool

	chunkLeft int // packet bytes left in the current chunk
	chip      uint8
	inLayout  bool
	ox, oy    uint16
	fx, fy    uint8

	clock clock
	tdc   []TDC
	stats Stats
	err   error
}

// NewRawReader decodes .tpx3 data from r; name is used in errors.
func NewRawReader(r io.Reader, name string, layout Layout) *RawReader {
	return &RawReader{r: r, name: name, layout: layout, batch: DefaultBatch, buf: make([]byte, 1<<20)}
}

// SetBatch sets the number of hits a Read delivers (at least 1): fewer
// only at the end of the stream, or from a live source when no more has
// arrived.
func (d *RawReader) SetBatch(n int) { d.batch = max(n, 1) }

// Continue makes the reader extend times from where prev stopped, for a
// run split over several files.
func (d *RawReader) Continue(prev *RawReader) { d.clock = prev.clock }

// ClockState is where a reader's extension of the wrapping times stands:
// what a reader needs to go on with a stream another one decoded before
// (a Kafka partition moving to another process).
type ClockState struct {
	Ref   int64 // the latest extended time, in 25 ns ticks
	Begun bool  // a time has been seen
}

// Clock returns the state of the time extension.
func (d *RawReader) Clock() ClockState { return ClockState{d.clock.ref, d.clock.begun} }

// SetClock makes the reader extend times from s.
func (d *RawReader) SetClock(s ClockState) { d.clock = clock{ref: s.Ref, begun: s.Begun} }

// Reset makes the reader decode r next, as the continuation of the same
// stream (the next message of a partition), keeping its buffer, its time
// extension and its counts; the end and any error of the last are
// forgotten, and errors name the new stream and its bytes. The last must
// have ended at a chunk boundary.
func (d *RawReader) Reset(r io.Reader, name string) {
	d.r, d.name = r, name
	d.base, d.lo, d.hi, d.eof, d.err, d.chunkLeft = 0, 0, 0, false, nil, 0
}

// TDC returns the TDC packets decoded by the last Read, valid until the next.
func (d *RawReader) TDC() []TDC { return d.tdc }

// Stats implements [Reader].
func (d *RawReader) Stats() Stats { return d.stats }

// Read implements [Reader].
func (d *RawReader) Read(dst *pixel.Hits) error {
	dst.Reset()
	d.tdc = d.tdc[:0]
	if d.err != nil {
		return d.err
	}
	defer func() { d.stats.Hits += int64(dst.Len()) }()
	dst.Reserve(d.batch)
	live, _ := d.r.(buffered)
	for dst.Len() < d.batch && len(d.tdc) < d.batch {
		// From a live source, what arrived goes on at once: a batch
		// waiting to fill would hold the clusters of a slow stream.
		if d.hi-d.lo < 8 && live != nil && (dst.Len() > 0 || len(d.tdc) > 0) && live.Buffered() == 0 {
			break
		}
		if d.chunkLeft == 0 {
			if err := d.header(); err != nil {
				d.err = err
				return err
			}
			continue
		}
		if d.hi-d.lo < 8 {
			if err := d.fill(8); err != nil {
				d.err = d.truncated(err)
				return d.err
			}
		}
		n := min(d.chunkLeft, d.hi-d.lo) &^ 7
		n = min(n, 8*(d.batch-dst.Len()))
		d.packets(dst, d.buf[d.lo:d.lo+n])
		d.lo += n
		d.chunkLeft -= n
		d.stats.Bytes += int64(n)
	}
	return nil
}

func (d *RawReader) offset() int64 { return d.base + int64(d.lo) }

func (d *RawReader) truncated(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("tpx3: %s: byte %d: chunk truncated, %d of its bytes missing: %w",
			d.name, d.offset(), d.chunkLeft, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("tpx3: %s: byte %d: %w", d.name, d.offset(), err)
}

// header reads the next chunk header; io.EOF at a clean end.
func (d *RawReader) header() error {
	if err := d.fill(8); err != nil {
		if errors.Is(err, io.EOF) && d.hi == d.lo {
			return io.EOF
		}
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("tpx3: %s: byte %d: chunk header truncated after %d bytes: %w",
				d.name, d.offset(), d.hi-d.lo, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("tpx3: %s: byte %d: %w", d.name, d.offset(), err)
	}
	h := d.buf[d.lo : d.lo+8]
	if string(h[:4]) != "TPX3" {
		return fmt.Errorf("tpx3: %s: byte %d: chunk header %q is not \"TPX3\"", d.name, d.offset(), h[:4])
	}
	size := int(binary.LittleEndian.Uint16(h[6:]))
	if size%8 != 0 {
		return fmt.Errorf("tpx3: %s: byte %d: chunk size %d is not a multiple of 8", d.name, d.offset(), size)
	}
	d.chip = h[4]
	d.inLayout = int(d.chip) < len(d.layout.OriginX)
	if d.inLayout {
		c := d.chip
		d.ox, d.oy, d.fx, d.fy = d.layout.OriginX[c], d.layout.OriginY[c], d.layout.FlipX[c], d.layout.FlipY[c]
	}
	d.chunkLeft = size
	d.lo += 8
	d.stats.Bytes += 8
	d.stats.Chunks++
	return nil
}

// fill makes at least k bytes available unless the stream ends first.
func (d *RawReader) fill(k int) error {
	for d.hi-d.lo < k {
		if d.eof {
			return io.EOF
		}
		if d.lo > 0 {
			copy(d.buf, d.buf[d.lo:d.hi])
			d.base += int64(d.lo)
			d.hi -= d.lo
			d.lo = 0
		}
		n, err := d.r.Read(d.buf[d.hi:])
		d.hi += n
		if err == io.EOF {
			d.eof = true
		} else if err != nil {
			return err
		}
	}
	return nil
}

// packets decodes whole packets; b holds a multiple of 8 bytes. Runs of
// pixel packets go to pixelRun; other packets (rare in pixel data), the
// first hit of the stream and chunks of chips outside the layout are
// handled here one at a time.
func (d *RawReader) packets(dst *pixel.Hits, b []byte) {
	n0 := dst.Len()
	n := n0 + len(b)/8
	dst.X, dst.Y, dst.ToA, dst.ToT = growTo(dst.X, n), growTo(dst.Y, n), growTo(dst.ToA, n), growTo(dst.ToT, n)
	k := n0
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		switch {
		case w>>60 != 0xB:
			d.other(w)
		case !d.inLayout:
			d.stats.OutOfRange++
		default:
			if !d.clock.begun {
				d.clock.extend((w&0xFFFF)<<14|(w>>30)&0x3FFF, 30)
			}
			m, ref := pixelRun(b, dst.X[k:], dst.Y[k:], dst.ToA[k:], dst.ToT[k:], d.clock.ref)
			d.clock.ref = ref
			if d.ox|d.oy != 0 || d.fx|d.fy != 0 {
				place(dst.X[k:k+m], dst.Y[k:k+m], d.ox, d.oy, uint16(d.fx), uint16(d.fy))
			}
			k += m
			b = b[8*m:]
			continue
		}
		b = b[8:]
	}
	dst.X, dst.Y, dst.ToA, dst.ToT = dst.X[:k], dst.Y[:k], dst.ToA[:k], dst.ToT[:k]
}

// pixelRun decodes the pixel packets at the start of b up to the first
// other packet into the columns, which have room for all of b, and returns
// their number and the clock's new reference. The pixels are the chip's
// own. It is the decoder's hot loop, kept apart so that its few values
// stay in registers.
func pixelRun(b []byte, xs, ys []uint16, ts []pixel.Time, tots []uint16, ref int64) (int, int64) {
	xs = xs[:len(b)/8]
	ys, ts, tots = ys[:len(xs)], ts[:len(xs)], tots[:len(xs)]
	for i := range xs {
		w := binary.LittleEndian.Uint64(b[8*i:])
		if w>>60 != 0xB {
			return i, ref
		}
		// Each column is written as soon as its value is known: short
		// lives for the temporaries keep the loop free of register spills.
		tots[i] = uint16(w>>20) & 0x3FF
		addr := uint16(w >> 44)
		xs[i] = (addr&0xFE00)>>8 + (addr&7)>>2
		ys[i] = (addr&0x1F8)>>1 + addr&3
		// Extend the 30-bit coarse time to the value nearest the reference
		// (clock.extend, inlined by hand).
		coarse := (w&0xFFFF)<<14 | (w>>30)&0x3FFF
		delta := int64((coarse - uint64(ref)) & (1<<30 - 1))
		if delta >= 1<<29 {
			delta -= 1 << 30
		}
		ref += delta
		ts[i] = pixel.Time(ref*1600 - int64((w>>16)&0xF)*100)
	}
	return len(xs), ref
}

// place moves chip pixels to their place in the detector: flipped (fx, fy
// are 0 or 255) and shifted to the chip's origin.
func place(xs, ys []uint16, ox, oy, fx, fy uint16) {
	ys = ys[:len(xs)]
	for i, x := range xs {
		xs[i], ys[i] = ox+(x^fx), oy+(ys[i]^fy)
	}
}

func growTo[T any](s []T, n int) []T {
	if cap(s) < n {
		ns := make([]T, n, n+n/2)
		copy(ns, s)
		return ns
	}
	return s[:n]
}

// other handles every packet that is not a pixel hit.
func (d *RawReader) other(w uint64) {
	switch w >> 60 {
	case 0x6:
		edge := TDCEdge(w >> 56 & 0xF)
		switch edge {
		case TDC1Rise, TDC1Fall, TDC2Rise, TDC2Fall:
		default:
			d.stats.Unknown++
			return
		}
		ts := (w >> 9) & (1<<35 - 1) // 3.125 ns ticks: 8 per 25 ns tick
		fine := int64((w >> 5) & 0xF)
		ext := d.clock.extend(ts>>3, 32)
		t := ext*1600 + int64(ts&7)*200 + (max(fine-1, 0)*200+6)/12
		d.tdc = append(d.tdc, TDC{Edge: edge, Chip: d.chip, Trigger: uint16(w>>44) & 0xFFF, Time: pixel.Time(t)})
		d.stats.TDC++
	case 0x4, 0x5, 0x7:
		d.stats.Control++
	default:
		d.stats.Unknown++
	}
}
