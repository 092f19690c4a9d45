package tpx3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Format is a hit file format.
type Format uint8

// Hit file formats.
const (
	Auto Format = iota
	TPX3
	T3PA
	Katherine
	CSV
)

var formatNames = [...]string{Auto: "auto", TPX3: "tpx3", T3PA: "t3pa", Katherine: "katherine", CSV: "csv"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// ParseFormat accepts auto, tpx3, t3pa, katherine or csv.
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if strings.EqualFold(s, name) {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("tpx3: unknown format %q (want auto, tpx3, t3pa, katherine or csv)", s)
}

// Detect picks the format of a file from its first bytes, and from its
// name when the content is ambiguous.
func Detect(name string, head []byte) (Format, error) {
	if bytes.HasPrefix(head, []byte("TPX3")) {
		return TPX3, nil
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".tpx3":
		return TPX3, nil
	case ".t3pa":
		return T3PA, nil
	case ".csv":
		return CSV, nil
	}
	first, _, _ := bytes.Cut(head, []byte("\n"))
	switch {
	case bytes.Contains(first, []byte("Matrix Index")):
		return T3PA, nil
	case bytes.Contains(first, []byte(",")):
		return CSV, nil
	case len(bytes.Fields(first)) == 4 || bytes.HasPrefix(bytes.TrimSpace(first), []byte("#")):
		return Katherine, nil
	}
	return Auto, fmt.Errorf("tpx3: %s: cannot tell the format from the name or the first line %q; name it with --format", name, truncate(first, 60))
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Options configure [NewReader].
type Options struct {
	Format Format
	Layout Layout // chip placement for tpx3
	Width  int    // sensor width for the linear pixel index of text formats
	Height int
	// Batch is the number of hits a Read of a .tpx3 stream delivers (0:
	// DefaultBatch; see RawReader.SetBatch); the text formats read in
	// blocks of text.
	Batch int
}

// NewReader returns a reader for the stream r named name. With Format Auto
// it looks at the first bytes.
func NewReader(r io.Reader, name string, opt Options) (Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	f := opt.Format
	if f == Auto {
		head, err := br.Peek(512)
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return nil, fmt.Errorf("tpx3: %s: %w", name, err)
		}
		if f, err = Detect(name, head); err != nil {
			return nil, err
		}
	}
	w, h := max(opt.Width, 1), max(opt.Height, 1)
	switch f {
	case TPX3:
		// br has a Buffered method too: hidden, so that a file's batches
		// are full rather than ending where br's buffer does.
		var src io.Reader = struct{ io.Reader }{br}
		if live, ok := r.(buffered); ok {
			src = liveReader{br, live}
		}
		rr := NewRawReader(src, name, opt.Layout)
		if opt.Batch > 0 {
			rr.SetBatch(opt.Batch)
		}
		return rr, nil
	case T3PA:
		return NewT3PAReader(br, name, w, h), nil
	case Katherine:
		return NewKatherineReader(br, name, w, h), nil
	case CSV:
		return NewCSVReader(br, name), nil
	}
	return nil, fmt.Errorf("tpx3: %s: unknown format %v", name, f)
}

// buffered is a live source (see online.Stream): it tells how many bytes
// it can give without waiting, and the raw decoder then delivers what
// arrived rather than wait for a full batch.
type buffered interface {
	io.Reader
	Buffered() int
}

// liveReader counts the bytes of the detection buffer with the source's.
type liveReader struct {
	*bufio.Reader
	src buffered
}

func (l liveReader) Buffered() int { return l.Reader.Buffered() + l.src.Buffered() }
