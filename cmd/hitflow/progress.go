package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a progress bar (of bytes, or of items such as hits) on a
// terminal once a run has taken more than a second; it stays silent
// otherwise.
type progress struct {
	total int64
	start time.Time
	bar   *progressbar.ProgressBar
	off   bool
}

func newProgress(w io.Writer, total int64, quiet bool) *progress {
	return newBar(w, total, "reading", true, quiet)
}

// newCountProgress counts items of what, such as "hits".
func newCountProgress(w io.Writer, total int64, what string, quiet bool) *progress {
	return newBar(w, total, what, false, quiet)
}

func newBar(w io.Writer, total int64, desc string, bytes, quiet bool) *progress {
	f, isFile := w.(*os.File)
	off := quiet || total <= 0 || !isFile || !term.IsTerminal(int(f.Fd()))
	p := &progress{total: total, start: time.Now(), off: off}
	if !off {
		// Made now so that its rate counts from the start; it draws
		// nothing until the first Set.
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionShowBytes(bytes),
			progressbar.OptionShowCount(),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		p.bar.StartWithoutRender()
	}
	return p
}

// Update reports the bytes done so far.
func (p *progress) Update(done int64) {
	if p.off || time.Since(p.start) < time.Second {
		return
	}
	p.bar.Set64(done)
}

// Done removes the bar if it was drawn.
func (p *progress) Done() {
	if p.bar != nil && time.Since(p.start) >= time.Second {
		p.bar.Finish()
	}
}
