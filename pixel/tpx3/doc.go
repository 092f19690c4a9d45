// Package tpx3 reads and writes Timepix3 hit data and applies the per-pixel
// energy calibration.
//
// Formats (see [Format] and [Open]):
//
//	format     content                                        time of a hit
//	tpx3       SPIDR/SERVAL raw: chunks of 64-bit packets     ((spidr<<14|ToA) extended over the 30-bit wrap)*25 ns - FToA*1.5625 ns
//	t3pa       ADVACAM Pixet text, tab separated, header      ToA*25 ns - FToA*1.5625 ns
//	katherine  Katherine "Burda" text: coord toa ftoa tot      ToA*25 ns - FToA*1.5625 ns
//	csv        x,y,toa_ns,tot with an optional header          toa_ns
//
// A .tpx3 chunk is the ASCII magic "TPX3", the chip index (byte 4), the
// readout mode (byte 5) and the size in bytes of the packets that follow
// (bytes 6-7, little-endian). Packets are little-endian 64-bit words whose
// top nibble is the type:
//
//	0xB  pixel: address 59-44, ToA 43-30, ToT 29-20, FToA 19-16, SPIDR time 15-0
//	0x6  TDC: edge 59-56 (0xF/0xA TDC1 rise/fall, 0xE/0xB TDC2), trigger 55-44,
//	     time 43-9 in 3.125 ns, fine 8-5 in 3.125/12 ns steps from 1
//	0x4  global time (0x44 low word, 0x45 high word)
//	0x5  packet id (0x50), heartbeat (0x5C), shutter (0x5F open, 0x5A close)
//	0x7  end of readout and other control words
//
// Pixel and TDC times share one clock; the reader extends both over their
// wraps by comparing each packet with a running reference (the previous
// extended time), so a stream that is only approximately ordered still
// comes out right as long as packets are within half a wrap (13.4 s) of
// each other. Packets of other types are counted, never silently lost.
//
// Multi-chip readouts are placed on one sensor plane by a [Layout].
//
// Pixel masks are text files read by [ReadMask] (a list of pixels or a
// 0/1 matrix like the calibration files) and written by [WriteMask].
//
// Readers share one shape ([Reader]): Read fills a batch and returns
// io.EOF at the end; a decoding error comes with the hits decoded before it
// and names the file and the byte offset or line.
package tpx3
