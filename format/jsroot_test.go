package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"go-hep.org/x/hep/groot"

	"github.com/hitflow/hitflow/clue"
	"github.com/hitflow/hitflow/clue/cluecsv"
	"github.com/hitflow/hitflow/clue/cluesim"
	"github.com/hitflow/hitflow/internal/fixture"
)

// jsrootDump reads every entry of a tree with JSROOT, in node: the reader
// of ROOT's web tools builds its model of the classes from the file's
// streamer records alone, so it reads only complete files. The test is
// skipped without node and JSROOT (HITFLOW_JSROOT names the folder that
// holds node_modules/jsroot), except in CI, which installs both.
func jsrootDump(t *testing.T, name, tree string) []map[string]any {
	t.Helper()
	dir := os.Getenv("HITFLOW_JSROOT")
	node, err := exec.LookPath("node")
	if dir == "" || err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must set HITFLOW_JSROOT and have node")
		}
		t.Skip("no JSROOT: set HITFLOW_JSROOT to a folder with node_modules/jsroot (npm install --ignore-scripts jsroot)")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "jsroot_dump.mjs"))
	// node resolves bare imports from the script's folder up, not from
	// NODE_PATH, for ES modules: the script runs from a copy in dir.
	run := filepath.Join(dir, "jsroot_dump.mjs")
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(run, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, run, name, tree)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jsroot: %v\n%s", err, stderr.String())
	}
	if bytes.Contains(stderr.Bytes(), []byte("Not found streamer")) || bytes.Contains(stderr.Bytes(), []byte("Missmatch")) {
		t.Fatalf("jsroot misses streamers:\n%s", stderr.String())
	}
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), []byte("{")) {
			continue // JSROOT's own notes ("Reuse basic type uint16_t ...")
		}
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("jsroot output %q: %v", sc.Text(), err)
		}
		rows = append(rows, row)
	}
	return rows
}

// num and nums read JSROOT's numbers back.
func num(t *testing.T, row map[string]any, b string) float64 {
	v, ok := row[b].(float64)
	if !ok {
		if bo, ok := row[b].(bool); ok {
			return map[bool]float64{false: 0, true: 1}[bo]
		}
		t.Fatalf("branch %s: %v", b, row[b])
	}
	return v
}

func nums(t *testing.T, row map[string]any, b string) []float64 {
	a, ok := row[b].([]any)
	if !ok {
		t.Fatalf("branch %s: %v", b, row[b])
	}
	v := make([]float64, len(a))
	for i, x := range a {
		v[i] = x.(float64)
	}
	return v
}

// TestJSROOT: JSROOT reads every branch of a clusters file and of a CLUE
// file, every value equal to what was written; so does the second file a
// process writes, whose vector streamers groot left out before.
func TestJSROOT(t *testing.T) {
	dir := t.TempDir()
	for _, calibrated := range []bool{false, true} {
		batches := fixture.Clusters(t, calibrated)
		want := fixture.Concat(batches)
		name := filepath.Join(dir, "c.root")
		writeClusters(t, name, batches...)
		rows := jsrootDump(t, name, "clusters")
		if len(rows) != want.Len() {
			t.Fatalf("%d entries, want %d", len(rows), want.Len())
		}
		m := &want.Members
		for i, row := range rows {
			from, to := want.Start[i], want.Start[i+1]
			ints := func(v []uint16) []float64 {
				var f []float64
				for _, x := range v {
					f = append(f, float64(x))
				}
				return f
			}
			var toa, e []float64
			for j := from; j < to; j++ {
				toa = append(toa, want.Members.ToA[j].Ns())
				if m.Calibrated() {
					e = append(e, float64(m.E[j]))
				} else {
					e = append(e, 0)
				}
			}
			ok := num(t, row, "id") == float64(want.ID[i]) && num(t, row, "size") == float64(want.Size[i]) &&
				num(t, row, "toa_ns") == want.FirstToA[i].Ns() && num(t, row, "span_ns") == (want.LastToA[i]-want.FirstToA[i]).Ns() &&
				num(t, row, "tot_sum") == float64(want.ToTSum[i]) && num(t, row, "energy_kev") == want.ESum[i] &&
				num(t, row, "calibrated") == map[bool]float64{false: 0, true: 1}[calibrated] &&
				num(t, row, "cx") == want.X[i] && num(t, row, "cy") == want.Y[i] &&
				num(t, row, "xmin") == float64(want.XMin[i]) && num(t, row, "xmax") == float64(want.XMax[i]) &&
				num(t, row, "ymin") == float64(want.YMin[i]) && num(t, row, "ymax") == float64(want.YMax[i]) &&
				num(t, row, "max") == want.Max[i] && num(t, row, "n") == float64(to-from) &&
				slices.Equal(nums(t, row, "x"), ints(m.X[from:to])) && slices.Equal(nums(t, row, "y"), ints(m.Y[from:to])) &&
				slices.Equal(nums(t, row, "tot"), ints(m.ToT[from:to])) && slices.Equal(nums(t, row, "toa"), toa) &&
				slices.EqualFunc(nums(t, row, "e"), e, func(a, b float64) bool { return float32(a) == float32(b) })
			if !ok {
				t.Fatalf("calibrated %v, entry %d: %v", calibrated, i, row)
			}
		}
	}

	pts, err := cluesim.Generate(cluesim.Options{Layers: 2, PointsPerLayer: 2000, Seed: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab := &cluecsv.Table{Coords: []string{"x", "y"}, Layer: true, Points: *pts}
	res, err := clue.Run(&tab.Points, clue.Params{DC: 3, RhoC: 2, DeltaC: 5, DeltaO: 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "clue.root")
	if err := WriteCLUE(name, nil, tab, res); err != nil {
		t.Fatal(err)
	}
	rows := jsrootDump(t, name, "clue")
	if len(rows) != tab.Points.Len() {
		t.Fatalf("clue: %d entries", len(rows))
	}
	p := &tab.Points
	for i, row := range rows {
		delta := res.Delta[i]
		if math.IsInf(delta, 1) {
			delta = math.MaxFloat64 // JSON has no infinity: the script's +Inf reads as null
		}
		ok := num(t, row, "x") == p.Coords[0][i] && num(t, row, "y") == p.Coords[1][i] && num(t, row, "layer") == float64(p.Layer[i]) &&
			num(t, row, "weight") == p.Weight[i] && num(t, row, "rho") == res.Rho[i] &&
			(row["delta"] == nil && math.IsInf(res.Delta[i], 1) || row["delta"] != nil && num(t, row, "delta") == delta) &&
			num(t, row, "nh") == float64(res.NH[i]) && num(t, row, "isSeed") == map[bool]float64{false: 0, true: 1}[res.IsSeed[i]] &&
			num(t, row, "clusterId") == float64(res.ClusterID[i])
		if !ok {
			t.Fatalf("clue entry %d: %v", i, row)
		}
	}
}

// TestROOTStreamers: every ROOT file has the streamer records of its
// leaves and vector branches, the second a process writes too.
func TestROOTStreamers(t *testing.T) {
	for i := range 2 {
		name := filepath.Join(t.TempDir(), "c.root")
		writeClusters(t, name, fixture.Clusters(t, i == 1)...)
		f, err := groot.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		var classes []string
		for _, si := range f.StreamerInfos() {
			classes = append(classes, si.Name())
		}
		f.Close()
		for _, c := range []string{"TLeaf", "TLeafO", "TLeafS", "TLeafI", "TLeafL", "TLeafD", "TLeafElement", "TBranchElement",
			"vector<uint16_t>", "vector<float>", "vector<double>", "TTree", "TBranch"} {
			if !slices.Contains(classes, c) {
				t.Errorf("file %d: no streamer for %s in %q", i+1, c, classes)
			}
		}
	}
}
