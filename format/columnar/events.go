package columnar

import (
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/hitflow/hitflow/internal/damage"
	"github.com/hitflow/hitflow/jpet"
)

// EventFields are the columns of a J-PET event table: the authors'
// float32 z_u, z_d, dl in metres.
var EventFields = []arrow.Field{
	field("z_u", arrow.PrimitiveTypes.Float32), field("z_d", arrow.PrimitiveTypes.Float32), field("dl", arrow.PrimitiveTypes.Float32),
}

// WriteEvents writes J-PET list-mode events with the precision of
// the authors' binary format, so either file reads back to the same events.
func WriteEvents(w io.Writer, events []jpet.Event) error {
	t, err := newParquetTable(w, EventFields)
	if err != nil {
		return err
	}
	f := t.rb.Fields()
	zu, zd, dl := f[0].(*array.Float32Builder), f[1].(*array.Float32Builder), f[2].(*array.Float32Builder)
	for i, e := range events {
		zu.Append(float32(e.ZU))
		zd.Append(float32(e.ZD))
		dl.Append(float32(e.DL))
		if (i+1)%rowGroup == 0 {
			if err := t.added(rowGroup); err != nil {
				t.Close()
				return err
			}
		}
	}
	if err := t.added(len(events) % rowGroup); err != nil {
		t.Close()
		return err
	}
	return t.Close()
}

// ReadEvents reads events written by WriteEvents. A
// non-finite value is an error naming the file and the row.
func ReadEvents(name string) (events []jpet.Event, err error) {
	defer damage.Recover(name, &err)
	tbl, err := readParquet(name, EventFields)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	var cols [3][]float32
	for k, col := range []string{"z_u", "z_d", "dl"} {
		eachChunk(tbl, col, func(a arrow.Array) { cols[k] = append(cols[k], a.(*array.Float32).Float32Values()...) })
	}
	events = make([]jpet.Event, tbl.NumRows())
	for i := range events {
		events[i] = jpet.Event{ZU: float64(cols[0][i]), ZD: float64(cols[1][i]), DL: float64(cols[2][i])}
	}
	for i, e := range events {
		for _, v := range [3]float64{e.ZU, e.ZD, e.DL} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return events[:i], fmt.Errorf("%s: row %d: value %v is not finite", name, i, v)
			}
		}
	}
	return events, nil
}
