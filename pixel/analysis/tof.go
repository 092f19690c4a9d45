package analysis

import (
	"math"
	"slices"
	"sync"

	"github.com/hitflow/hitflow/pixel"
)

// TOF gives each cluster its time of flight: its first ToA minus the
// latest reference pulse (a TDC edge) at or before it, and that pulse's
// number. The references come as they are read (AddReferences, from one
// goroutine) and the clusters as they are written (Assign, from
// another): a cluster must come after every reference before it, which a
// run's reorder window ensures for references read out of order by less
// than it. It is safe for that concurrent use.
type TOF struct {
	// Period is the expected time between pulses; a gap of more than 1.5
	// of it counts the pulses missing from it. 0: none counted.
	Period pixel.Time

	mu      sync.Mutex
	refs    []pixel.Time // references not yet passed by the clusters, increasing
	dropped int64        // references before refs[0]
	missing int64
	before  int64 // clusters before the first reference
}

// AddReferences adds reference times; they may come a little out of
// order.
func (t *TOF) AddReferences(times []pixel.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range times {
		i := len(t.refs)
		for i > 0 && t.refs[i-1] > v {
			i--
		}
		t.refs = slices.Insert(t.refs, i, v)
	}
}

// Assign sets the time-of-flight columns of c (see
// pixel.Clusters.HasTOF); the clusters come in time order (the order of
// a run's output).
func (t *TOF) Assign(c *pixel.Clusters) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := c.Len()
	c.TOF, c.Pulse = sized(c.TOF, n), sized(c.Pulse, n)
	for i, toa := range c.FirstToA {
		// The latest reference at or before the cluster; those before
		// it are done with (the next clusters come later), but for the
		// gaps between them, counted first.
		k, found := slices.BinarySearch(t.refs, toa+1)
		if !found {
			k--
		}
		if k < 0 {
			c.TOF[i], c.Pulse[i] = 0, -1
			t.before++
			continue
		}
		t.countMissing(k)
		t.dropped += int64(k)
		t.refs = t.refs[k:]
		c.TOF[i], c.Pulse[i] = toa-t.refs[0], t.dropped
	}
}

// countMissing counts the pulses missing between refs[0] and refs[k].
func (t *TOF) countMissing(k int) {
	if t.Period <= 0 {
		return
	}
	for j := 1; j <= k; j++ {
		if gap := t.refs[j] - t.refs[j-1]; float64(gap) > 1.5*float64(t.Period) {
			t.missing += int64(math.Round(float64(gap)/float64(t.Period))) - 1
		}
	}
}

// TOFState is what a TOF holds: the references not yet passed and its
// counts, for a stream that goes on elsewhere (see Restore).
type TOFState struct {
	Refs                     []pixel.Time
	Passed, Missing, Without int64 // references passed, pulses missing, clusters before the first
}

// State returns a copy of what t holds.
func (t *TOF) State() TOFState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TOFState{slices.Clone(t.refs), t.dropped, t.missing, t.before}
}

// Restore makes t go on from s, the State of another with the same
// Period.
func (t *TOF) Restore(s TOFState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refs, t.dropped, t.missing, t.before = slices.Clone(s.Refs), s.Passed, s.Missing, s.Without
}

// Before is the number of clusters without a time of flight: before the
// first reference (or, rarely, written out of time order after the
// references before them were passed: a cluster spanning over
// pixel.LongSpan hits).
func (t *TOF) Before() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.before
}

// Missing is the number of pulses missing between the references passed
// so far (see Period).
func (t *TOF) Missing() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.missing
}

// Neutron constants (CODATA 2018, SI exact where defined).
const (
	neutronMass  = 1.67492750056e-27 // kg
	electronVolt = 1.602176634e-19   // J
	planck       = 6.62607015e-34    // J s
)

// Neutron is the energy (eV) and wavelength (Å) of a neutron that took
// tof since its pulse to fly path metres, and whether it has them: a
// cluster before the first pulse (pulse < 0) or at its pulse (tof 0)
// has none.
func Neutron(tof pixel.Time, pulse int64, path float64) (energy, wavelength float64, ok bool) {
	if pulse < 0 || tof <= 0 {
		return 0, 0, false
	}
	return NeutronEnergy(tof, path), NeutronWavelength(tof, path), true
}

// NeutronEnergy is the kinetic energy in eV of a neutron that took tof to
// fly path metres (non-relativistic).
func NeutronEnergy(tof pixel.Time, path float64) float64 {
	v := path / (tof.Ns() * 1e-9)
	return neutronMass * v * v / 2 / electronVolt
}

// NeutronWavelength is the de Broglie wavelength in angstrom of a neutron
// that took tof to fly path metres.
func NeutronWavelength(tof pixel.Time, path float64) float64 {
	v := path / (tof.Ns() * 1e-9)
	return planck / (neutronMass * v) * 1e10
}
