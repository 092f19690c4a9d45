package tpx3

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

func TestLabelledRoundTrip(t *testing.T) {
	var h pixel.Hits
	h.Append(1, 2, 3*pixel.Nanosecond/2, 40)
	h.Append(255, 0, 100*pixel.Nanosecond, 7)
	var buf bytes.Buffer
	w, _ := NewCSVWriter(&buf, true)
	w.WriteLabelled(&h, 0, 1, 5)
	w.WriteLabelled(&h, 1, 2, 9)
	w.Close()
	l, err := ReadLabelled(&buf, "a.csv")
	if err != nil {
		t.Fatal(err)
	}
	if l.Hits.Len() != 2 || l.Hits.X[1] != 255 || l.Hits.ToA[0] != 3*pixel.Nanosecond/2 || l.Hits.ToT[1] != 7 || l.Labels[0] != 5 || l.Labels[1] != 9 {
		t.Fatalf("%+v", l)
	}
}

func TestLabelledErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "line 0: no header"},
		{"x,y,toa_ns,tot\n1,2,3,4\n", `line 1: header "x,y,toa_ns,tot" has no column "cluster"`},
		{"cluster,x,y,toa_ns,tot\n1,2,3,4\n", "line 2: 4 fields, want 5"},
		{"x,y,toa_ns,tot,cluster\n1,2,3,4,5\n1,2,3,4,a\n", `line 3: cluster "a" is not an integer`},
		{"x,y,toa_ns,tot,cluster\n1,-2,3,4,5\n", "line 2: pixel"},
	} {
		_, err := ReadLabelled(strings.NewReader(tc.in), "a.csv")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "a.csv") {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
