package root

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/internal/fixture"
	"github.com/hitflow/hitflow/pixel"
)

// TestRawReplyRoundTrip sends every kind of reply through writeRaw and
// readRaw and requires it back field for field, and a cut stream to be
// an error at every length.
func TestRawReplyRoundTrip(t *testing.T) {
	calibrated := fixture.Two(t, true)
	replies := []*rootReply{
		{Err: "x.root: damaged file: é"},
		{Kind: "clusters"},
		{Clusters: fixture.Two(t, false)},
		{Clusters: calibrated},
		{Clusters: &pixel.Clusters{}}, // no clusters: nil columns
		{
			Table: &cluecsv.Table{Coords: []string{"x", "y", ""}, Layer: true, Points: clue.Points{
				Coords: [][]float64{{1, -2.5, math.Inf(1)}, {0, math.Copysign(0, -1), 3}, nil},
				Layer:  []int32{0, -7, math.MaxInt32},
				Weight: []float64{1, 2, math.SmallestNonzeroFloat64},
			}},
			Result: &clue.Result{
				Rho: []float64{3, 2, 1}, Delta: []float64{math.Inf(1), 1.5, 0.25},
				NH: []int32{-1, 0, 1}, IsSeed: []bool{true, false, false},
				ClusterID: []int32{0, 0, -1}, Clusters: 1, Outliers: 1,
			},
		},
	}
	for k, want := range replies {
		var buf bytes.Buffer
		if err := writeRaw(&buf, want); err != nil {
			t.Fatalf("reply %d: %v", k, err)
		}
		var got rootReply
		if err := readRaw(bytes.NewReader(buf.Bytes()), &got); err != nil {
			t.Fatalf("reply %d: %v", k, err)
		}
		if !sameExported(reflect.ValueOf(want).Elem(), reflect.ValueOf(&got).Elem()) {
			t.Errorf("reply %d: got %+v\nwant %+v", k, got, *want)
		}
		for n := range buf.Len() {
			var cut rootReply
			if err := readRaw(bytes.NewReader(buf.Bytes()[:n]), &cut); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("reply %d cut at %d of %d bytes: %v", k, n, buf.Len(), err)
			}
		}
	}
	// The calibrated clusters did carry energies and members.
	if len(calibrated.Members.E) != 4 || calibrated.Start[2] != 4 {
		t.Fatalf("test clusters lack hits: %+v", calibrated.Members)
	}
}

// sameExported compares the exported fields of two values deeply: the
// clusterer's ordering keys (unexported) do not travel.
func sameExported(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() && !sameExported(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameExported(a.Elem(), b.Elem())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}
