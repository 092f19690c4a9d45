package online

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/hitflow/hitflow/pixel/pixelsim"
)

// cutReader returns data in reads of the sizes given by cuts, in turn.
type cutReader struct {
	data []byte
	cuts []byte
	i    int
}

func (c *cutReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.cuts) > 0 {
		n = int(c.cuts[c.i%len(c.cuts)])*97 + 1
		c.i++
	}
	n = copy(p, c.data[:min(n, len(c.data))])
	c.data = c.data[n:]
	return n, nil
}

// receiveAll receives data read in the given pieces, checking that
// every push ends at a chunk end while the bytes are .tpx3 chunks.
func receiveAll(t *testing.T, data, cuts []byte) []byte {
	s, _ := newStream(t.Context(), "fuzz", Options{Memory: 1 << 20})
	rc := newReceiver(s)
	r := &cutReader{data: data, cuts: cuts}
	var framedUntil int64 // the received bytes are whole chunks up to here
	for pos := 0; pos+8 <= len(data) && string(data[pos:pos+4]) == "TPX3"; {
		next := pos + 8 + int(binary.LittleEndian.Uint16(data[pos+6:]))
		if next > len(data) {
			break
		}
		pos = next
		framedUntil = int64(pos)
	}
	var got []byte
	buf := make([]byte, 1<<16)
	for {
		_, err := rc.take(r)
		if rec := s.Stats().Received; rec <= framedUntil && rec > 0 && !chunkEnd(data, rec) {
			t.Fatalf("pushed %d bytes, inside a chunk", rec)
		}
		for s.Buffered() > 0 {
			n, _ := s.Read(buf)
			got = append(got, buf[:n]...)
		}
		if err == io.EOF {
			break
		}
	}
	rc.passRest()
	for s.Buffered() > 0 {
		n, _ := s.Read(buf)
		got = append(got, buf[:n]...)
	}
	return got
}

// chunkEnd reports whether offset is the end of a chunk of data.
func chunkEnd(data []byte, offset int64) bool {
	for pos := int64(0); pos+8 <= int64(len(data)); {
		pos += 8 + int64(binary.LittleEndian.Uint16(data[pos+6:]))
		if pos == offset {
			return true
		}
	}
	return false
}

// FuzzReceive: whatever the bytes and however the reads cut them, the
// reader gets them all, in order, and whole chunks at a time while they
// are chunks.
func FuzzReceive(f *testing.F) {
	raw := rawRun(f, pixelsim.Options{Hits: 20000, Seed: 9})
	f.Add(raw, []byte{3, 200, 1})
	f.Add(raw[:5000], []byte{0})
	f.Add([]byte("TPX3\x00\x00\x10\x00short"), []byte{})
	f.Add([]byte("x,y,toa,tot\n1,2,3,4\n"), []byte{0, 1})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		if got := receiveAll(t, data, cuts); !bytes.Equal(got, data) {
			t.Fatalf("received %d bytes, not the %d sent", len(got), len(data))
		}
	})
}
