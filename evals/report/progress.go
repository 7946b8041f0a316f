package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (an *os.File or anything with
// an Fd method whose descriptor is a TTY).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress reports how far a long run is. On a terminal it redraws one bar
// line (at most every 100 ms); elsewhere (logs, CI, pipes) it writes a plain
// line at every 10% and at least every 10 s, so logs stay short and
// readable. It is safe for concurrent use; a nil *Progress does nothing.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	total   int
	done    int
	tty     bool
	width   int
	start   time.Time
	last    time.Time
	lastPct int
	now     func() time.Time
	closed  bool
}

// NewProgress starts a progress report of total steps on w. A nil w (or
// io.Discard) reports nothing.
func NewProgress(w io.Writer, label string, total int) *Progress {
	if w == nil {
		w = io.Discard
	}
	p := &Progress{w: w, label: label, total: total, tty: IsTerminal(w), width: 30, now: time.Now}
	p.start = p.now()
	p.last = p.start
	return p
}

// SetTerminal overrides terminal detection (for tests and --no-progress-bar).
func (p *Progress) SetTerminal(tty bool) { p.mu.Lock(); p.tty = tty; p.mu.Unlock() }

// Add records n more steps done.
func (p *Progress) Add(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.done += n
	now := p.now()
	if p.tty {
		if now.Sub(p.last) >= 100*time.Millisecond || p.done >= p.total {
			p.last = now
			fmt.Fprint(p.w, "\r"+p.barLine(now))
		}
		return
	}
	pct := -1
	if p.total > 0 {
		pct = 100 * p.done / p.total
	}
	if (pct >= 0 && pct/10 > p.lastPct/10) || now.Sub(p.last) >= 10*time.Second {
		p.last, p.lastPct = now, pct
		fmt.Fprintln(p.w, p.plainLine(now))
	}
}

// Done finishes the report with a final line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	now := p.now()
	if p.tty {
		fmt.Fprint(p.w, "\r"+p.barLine(now)+"\n")
		return
	}
	if p.lastPct < 100 || p.total <= 0 {
		fmt.Fprintln(p.w, p.plainLine(now))
	}
}

func (p *Progress) rate(now time.Time) float64 {
	el := now.Sub(p.start).Seconds()
	if el <= 0 {
		return 0
	}
	return float64(p.done) / el
}

func (p *Progress) eta(now time.Time) string {
	r := p.rate(now)
	if r <= 0 || p.total <= 0 || p.done >= p.total {
		return ""
	}
	left := time.Duration(float64(p.total-p.done) / r * float64(time.Second))
	return " ETA " + left.Round(time.Second).String()
}

func (p *Progress) barLine(now time.Time) string {
	frac := 0.0
	if p.total > 0 {
		frac = min(1, float64(p.done)/float64(p.total))
	}
	fill := int(frac * float64(p.width))
	bar := strings.Repeat("=", fill)
	if fill < p.width {
		bar += ">" + strings.Repeat(" ", p.width-fill-1)
	}
	return fmt.Sprintf("%s [%s] %d/%d %3.0f%% %.1f/s%s\x1b[K", p.label, bar, p.done, p.total, 100*frac, p.rate(now), p.eta(now))
}

func (p *Progress) plainLine(now time.Time) string {
	if p.total > 0 {
		return fmt.Sprintf("%s: %d/%d (%d%%) %.1f/s elapsed %s%s", p.label, p.done, p.total, 100*p.done/p.total,
			p.rate(now), now.Sub(p.start).Round(time.Second), p.eta(now))
	}
	return fmt.Sprintf("%s: %d done, elapsed %s", p.label, p.done, now.Sub(p.start).Round(time.Second))
}
