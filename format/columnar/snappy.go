package columnar

import (
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// snappyFast is the compression level with which a Parquet writer asks
// for s2's fast Snappy encoder. arrow-go encodes Snappy with klauspost's
// snappy package, whose Encode is s2's "better" mode: 2-3 % smaller files
// for four times the time, which made Parquet the bottleneck of a
// clustering run. The blocks are plain Snappy either way.
const snappyFast = 1

// fastSnappy is arrow-go's Snappy codec, except at level snappyFast.
// arrow-go finds codecs in a process-wide registry and ignores the level
// for Snappy, so registering this one changes nothing for a writer that
// does not ask for snappyFast: the choice stays with each writer.
type fastSnappy struct{}

var registerSnappy sync.Once

// snappyProps are the writer properties that pick the fast encoder; the
// codec is registered on first use, not when the package loads.
func snappyProps() []parquet.WriterProperty {
	registerSnappy.Do(func() { compress.RegisterCodec(compress.Codecs.Snappy, fastSnappy{}) })
	return []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithCompressionLevel(snappyFast)}
}

func (fastSnappy) Encode(dst, src []byte) []byte { return snappy.Encode(dst, src) }

func (fastSnappy) EncodeLevel(dst, src []byte, level int) []byte {
	if level == snappyFast {
		return s2.EncodeSnappy(dst, src)
	}
	return snappy.Encode(dst, src)
}

func (fastSnappy) Decode(dst, src []byte) []byte {
	out, err := snappy.Decode(dst, src)
	if err != nil {
		panic(err) // the codec interface has no error; DecodeWithError is used by the readers
	}
	return out
}

func (fastSnappy) DecodeWithError(dst, src []byte) ([]byte, error) { return snappy.Decode(dst, src) }

func (fastSnappy) NewReader(r io.Reader) io.ReadCloser { return io.NopCloser(snappy.NewReader(r)) }

func (fastSnappy) CompressBound(n int64) int64 { return int64(snappy.MaxEncodedLen(int(n))) }

func (fastSnappy) NewWriter(w io.Writer) io.WriteCloser { return snappy.NewBufferedWriter(w) }

func (s fastSnappy) NewWriterLevel(w io.Writer, _ int) (io.WriteCloser, error) {
	return s.NewWriter(w), nil
}
