package columnar

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// TestFastSnappyIsAWriterChoice: the writers' properties ask for the fast
// encoder, and the registered codec gives it only to them; both decode.
func TestFastSnappyIsAWriterChoice(t *testing.T) {
	props := parquetProps(ClusterFields)
	if props.CompressionFor("x") != compress.Codecs.Snappy || props.CompressionLevelFor("x") != snappyFast {
		t.Fatalf("codec %v level %d", props.CompressionFor("x"), props.CompressionLevelFor("x"))
	}
	codec, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		t.Fatal(err)
	}
	src := bytes.Repeat([]byte("hitflow clusters 0123456789 "), 4000)
	fast, usual := codec.EncodeLevel(nil, src, snappyFast), codec.EncodeLevel(nil, src, compress.DefaultCompressionLevel)
	if !bytes.Equal(fast, s2.EncodeSnappy(nil, src)) || !bytes.Equal(usual, snappy.Encode(nil, src)) {
		t.Fatal("the levels do not pick s2's fast encoder and the usual one")
	}
	for _, enc := range [][]byte{fast, usual} {
		if dec, err := snappy.Decode(nil, enc); err != nil || !bytes.Equal(dec, src) {
			t.Fatalf("decode: %v", err)
		}
	}
}
