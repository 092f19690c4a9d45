package pixelbench

import (
	"errors"
	"io/fs"
	"os"
)

// SettleDisk prepares a timed run that writes the file name: it removes
// the file a previous run left and has the system write its dirty pages
// to disk first. Otherwise the run overwrites hundreds of megabytes still
// being written back (ext4 frees them, the flusher competes for the two
// cores) and pays for the previous run as well as its own: a 20 M-hit
// gamma run to Arrow measured about a seventh slower so. A user's run, on
// a disk not busy with a run just before, is the settled one.
func SettleDisk(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	syncDisks()
	return nil
}
