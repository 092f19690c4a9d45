package text

import (
	"io"
	"os"
	"slices"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/internal/textscan"
)

// resultColumns are CLUE's output columns, after the input's.
var resultColumns = []string{"rho", "delta", "nh", "isSeed", "clusterId"}

// ReadCLUE reads a CLUE result written as CSV (by cluecsv.Write): the
// points and the result columns; errors name the line.
func ReadCLUE(name string) (*cluecsv.Table, *clue.Result, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	t, err := cluecsv.Read(f, name)
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	sc := textscan.New(f, name, "clue csv")
	r := &clue.Result{}
	r.Reserve(t.Points.Len())
	var cols []int
	var fs [][]byte
	for line := range sc.Lines() {
		if textscan.Skip(line) {
			continue
		}
		fs = textscan.Fields(fs, line, ',')
		if cols == nil {
			for _, want := range resultColumns {
				i := slices.IndexFunc(fs, func(f []byte) bool { return string(f) == want })
				if i < 0 {
					return nil, nil, sc.Errorf("no column %q: not a CLUE result", want)
				}
				cols = append(cols, i)
			}
			continue
		}
		if len(fs) <= slices.Max(cols) {
			return nil, nil, sc.Errorf("%d fields", len(fs))
		}
		var v [5]float64
		for k, c := range cols {
			var ok bool
			if v[k], ok = textscan.ParseFloat(fs[c]); !ok {
				return nil, nil, sc.Errorf("%s %q is not a number", resultColumns[k], fs[c])
			}
		}
		r.Rho, r.Delta, r.NH = append(r.Rho, v[0]), append(r.Delta, v[1]), append(r.NH, int32(v[2]))
		r.IsSeed, r.ClusterID = append(r.IsSeed, v[3] != 0), append(r.ClusterID, int32(v[4]))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	r.Count()
	return t, r, nil
}
