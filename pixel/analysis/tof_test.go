package analysis

import (
	"math"
	"testing"

	"github.com/hitflow/hitflow/pixel"
)

// clustersAt is a batch of clusters with the given first times.
func clustersAt(ts ...pixel.Time) *pixel.Clusters {
	c := &pixel.Clusters{}
	c.Reset()
	for i, t := range ts {
		c.ID, c.FirstToA = append(c.ID, int64(i)), append(c.FirstToA, t)
	}
	return c
}

func TestTOF(t *testing.T) {
	ms := pixel.Millisecond
	tof := TOF{Period: 10 * ms}
	// Out of order by a little, as a readout delivers them; the pulse at
	// 40 ms is missing, those at 60 and 70 too.
	tof.AddReferences([]pixel.Time{10 * ms, 30 * ms, 20 * ms})
	c := clustersAt(5*ms, 10*ms, 15*ms, 29*ms)
	tof.Assign(c)
	// The rest goes on in another TOF, from the state of the first.
	var resumed TOF
	resumed.Period = tof.Period
	resumed.Restore(tof.State())
	resumed.AddReferences([]pixel.Time{50 * ms, 80 * ms})
	d := clustersAt(31*ms, 55*ms, 80*ms, 95*ms)
	resumed.Assign(d)
	want := []struct {
		tof   pixel.Time
		pulse int64
	}{{0, -1}, {0, 0}, {5 * ms, 0}, {9 * ms, 1}, {1 * ms, 2}, {5 * ms, 3}, {0, 4}, {15 * ms, 4}}
	got := append(append([]pixel.Time{}, c.TOF...), d.TOF...)
	pulses := append(append([]int64{}, c.Pulse...), d.Pulse...)
	for i, w := range want {
		if got[i] != w.tof || pulses[i] != w.pulse {
			t.Errorf("cluster %d: tof %v, pulse %d; want %v, %d", i, got[i].Ns(), pulses[i], w.tof.Ns(), w.pulse)
		}
	}
	if !c.HasTOF() || !d.HasTOF() || resumed.Before() != 1 || resumed.Missing() != 3 {
		t.Errorf("before %d, missing %d; want 1 and 3", resumed.Before(), resumed.Missing())
	}
}

// The neutron's energy and wavelength against textbook values: thermal
// neutrons, 2200 m/s, have 25.30 meV and 1.798 Å; lambda[Å] = 3956.034 /
// v[m/s].
func TestNeutron(t *testing.T) {
	thermal := pixel.TimeFromNs(1e9 / 2200.0) // 1 m at 2200 m/s
	if e := NeutronEnergy(thermal, 1); math.Abs(e-0.02530) > 0.00001 {
		t.Errorf("thermal energy %v eV, want 0.02530", e)
	}
	if l := NeutronWavelength(thermal, 1); math.Abs(l-1.798) > 0.001 {
		t.Errorf("thermal wavelength %v Å, want 1.798", l)
	}
	if l := NeutronWavelength(10*pixel.Millisecond, 10); math.Abs(l-3.956034) > 1e-6 {
		t.Errorf("1000 m/s: %v Å, want 3.956034", l)
	}
}
