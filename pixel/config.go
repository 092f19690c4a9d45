package pixel

import (
	"fmt"
	"strings"
)

// Definition selects how the time condition joins hits into a cluster; see
// the package documentation for the exact text of each.
type Definition uint8

// The three cluster definitions of Čelko et al.
const (
	Local  Definition = iota // dynamic local-time neighbourhood (default)
	Global                   // dynamic global-time neighbourhood
	Window                   // static time window from the first hit
)

var definitionNames = [...]string{Local: "local", Global: "global", Window: "window"}

func (d Definition) String() string {
	if int(d) < len(definitionNames) {
		return definitionNames[d]
	}
	return fmt.Sprintf("Definition(%d)", d)
}

// ParseDefinition accepts "local", "global" or "window".
func ParseDefinition(s string) (Definition, error) {
	for d, name := range definitionNames {
		if strings.EqualFold(s, name) {
			return Definition(d), nil
		}
	}
	return 0, fmt.Errorf("pixel: unknown cluster definition %q (want local, global or window)", s)
}

// Config is the read-only configuration of a clusterer.
type Config struct {
	Definition Definition
	Dt         Time // maximum time distance, 200 ns by default
	Width      int  // sensor width in pixels
	Height     int  // sensor height in pixels
	// Restart is how much earlier than the latest hit a hit must be to
	// start the stream afresh (0 means DefaultRestart); see [Stats.Restarts].
	Restart Time
	// MemberLimit bounds memory when the clusters carry their hits (see
	// [Clusterer.KeepMembers]): a stream holding more hits than this in
	// clusters not yet emitted reports a [MemberLimitError] (0 means
	// DefaultMemberLimit).
	MemberLimit int

	longSpan int64 // LongSpan unless set (tests)
}

// DefaultMemberLimit is the default Config.MemberLimit: a run stopped by
// it peaks at 0.5 to 0.9 GB with the hits kept (BENCHMARKS.md). Only a
// cluster that never ends (a pixel firing within dt of itself) or a dt
// spanning seconds of data comes near it.
const DefaultMemberLimit = 1 << 21

// memberLimit is the effective Config.MemberLimit.
func (c Config) memberLimit() int {
	if c.MemberLimit == 0 {
		return DefaultMemberLimit
	}
	return c.MemberLimit
}

// span is the most hits a cluster may span and keep its first hit's place
// in the output (see [LongSpan]).
func (c Config) span() int64 {
	if c.longSpan == 0 {
		return LongSpan
	}
	return c.longSpan
}

// DefaultRestart is the default Config.Restart: far beyond any reorder
// window, short enough that what a restart holds up fits in memory.
const DefaultRestart = 10 * Millisecond

// RestartGap is the effective Config.Restart.
func (c Config) RestartGap() Time {
	if c.Restart == 0 {
		return DefaultRestart
	}
	return c.Restart
}

// DefaultConfig is the paper's default: local definition, dt = 200 ns, one
// 256 x 256 Timepix3 chip.
func DefaultConfig() Config {
	return Config{Definition: Local, Dt: 200 * Nanosecond, Width: 256, Height: 256, Restart: DefaultRestart}
}

// Validate reports a configuration that cannot be clustered.
func (c Config) Validate() error {
	switch {
	case c.Definition > Window:
		return fmt.Errorf("pixel: unknown cluster definition %d", c.Definition)
	case c.Dt < 0:
		return fmt.Errorf("pixel: negative dt %v ns", c.Dt.Ns())
	case c.Restart < 0:
		return fmt.Errorf("pixel: negative restart gap %v ns", c.Restart.Ns())
	case c.MemberLimit < 0:
		return fmt.Errorf("pixel: negative member limit %d", c.MemberLimit)
	}
	return checkSensor(c.Width, c.Height)
}

// checkSensor says whether a sensor's pixels fit the pixel matrix (and
// the masks and hit maps made for it).
func checkSensor(width, height int) error {
	switch {
	case width < 1 || height < 1 || width > 1<<16 || height > 1<<16:
		return fmt.Errorf("pixel: sensor size %dx%d out of range 1..65536", width, height)
	case (width+2)*(height+2) > 1<<28:
		return fmt.Errorf("pixel: sensor size %dx%d too large for the pixel matrix", width, height)
	}
	return nil
}
