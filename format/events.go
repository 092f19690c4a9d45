package format

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/internal/ctxio"
	"github.com/hitflow/hitflow/internal/outfile"
	"github.com/hitflow/hitflow/jpet"
)

// EventFormat checks that name is a J-PET event file hitflow reads and
// writes, by its extension: .bin (the authors' float32 triples z_u z_d
// dl), .txt (the same as text lines) or .parquet (columns z_u, z_d, dl).
func EventFormat(name string) (string, error) {
	switch ext := extension(name); ext {
	case ".bin", ".txt", ".parquet":
		return ext, nil
	default:
		return "", fmt.Errorf("%s: %w %q for J-PET events (want .bin, .txt or .parquet)", name, ErrUnknownFormat, ext)
	}
}

// ReadEvents reads a J-PET event file (see [EventFormat]), until ctx is
// done. A damaged file or a non-finite value is an error naming the file
// and the event.
func ReadEvents(ctx context.Context, name string) ([]jpet.Event, error) {
	ext, err := EventFormat(name)
	if err != nil {
		return nil, err
	}
	if ext == ".parquet" {
		return columnar.ReadEvents(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := ctxio.Reader{Ctx: ctx, R: f}
	if ext == ".txt" {
		return jpet.ReadEventsText(r, name)
	}
	return jpet.ReadEvents(r, name)
}

// WriteEvents writes a J-PET event file (see [EventFormat]) with the
// precision of the authors' binary format, so that every format reads
// back to the same events.
func WriteEvents(name string, events []jpet.Event) error {
	ext, err := EventFormat(name)
	if err != nil {
		return err
	}
	write := map[string]func(io.Writer, []jpet.Event) error{
		".bin": jpet.WriteEvents, ".txt": jpet.WriteEventsText, ".parquet": columnar.WriteEvents,
	}[ext]
	return outfile.Write(name, func(w io.Writer) error { return write(w, events) })
}
