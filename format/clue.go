package format

import (
	"fmt"
	"io"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/format/columnar"
	"github.com/hitflow/hitflow/format/root"
	"github.com/hitflow/hitflow/internal/outfile"
)

// WriteCLUE writes the points and CLUE's result, one row or entry per
// point: the coordinates, layer (when the input had one), weight, rho,
// delta (+Inf without a nearest-higher), nh, isSeed and clusterId. The
// format follows the extension: .csv, .parquet, .arrow (Arrow IPC) or
// .root (a TTree "clue"); "-" is CSV on stdout.
func WriteCLUE(name string, stdout io.Writer, t *cluecsv.Table, r *clue.Result) error {
	var write func(io.Writer, *cluecsv.Table, *clue.Result) error
	switch ext := extension(name); ext {
	case ".csv":
		write = cluecsv.Write
	case ".parquet":
		write = columnar.WriteCLUEParquet
	case ".arrow":
		write = columnar.WriteCLUEArrow
	case ".root":
		return root.WriteCLUE(name, t, r)
	default:
		return fmt.Errorf("%s: %w %q (want .csv, .parquet, .arrow or .root)", name, ErrUnknownFormat, ext)
	}
	w, err := outfile.CreateWriter(name, stdout)
	if err != nil {
		return err
	}
	if err := write(w, t, r); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
