package scoring

import "sync"

// Preferences hold what the user said and did about tools: explicit
// preferences (-1 avoid … +1 prefer) and how often a suggested tool was
// accepted or dismissed. Safe for concurrent use.
type Preferences struct {
	mu        sync.RWMutex
	explicit  map[string]float64
	accepted  map[string]int
	dismissed map[string]int
	version   uint64 // bumped by every change
}

// Version changes whenever a preference or a verdict is recorded, or the
// state imported.
func (p *Preferences) Version() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.version
}

// NewPreferences returns empty preferences.
func NewPreferences() *Preferences {
	return &Preferences{explicit: map[string]float64{}, accepted: map[string]int{}, dismissed: map[string]int{}}
}

// Set records an explicit preference, clamped to -1..1 (0 removes it).
func (p *Preferences) Set(tool string, v float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v = min(max(v, -1), 1)
	p.version++
	if v == 0 {
		delete(p.explicit, tool)
		return
	}
	p.explicit[tool] = v
}

// Accept records that the user accepted the tool (used its call or
// suggestion); Dismiss that they rejected it.
func (p *Preferences) Accept(tool string) {
	p.mu.Lock()
	p.accepted[tool]++
	p.version++
	p.mu.Unlock()
}

// Dismiss records a rejection.
func (p *Preferences) Dismiss(tool string) {
	p.mu.Lock()
	p.dismissed[tool]++
	p.version++
	p.mu.Unlock()
}

// Score is 0..1, 0.5 neutral. Feedback gives the smoothed acceptance rate
// (a+1)/(a+d+2); an explicit preference e then moves it toward 1 (e > 0)
// or 0 (e < 0) by |e|: the user's word outweighs their clicks.
func (p *Preferences) Score(tool string) float64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	a, d := p.accepted[tool], p.dismissed[tool]
	s := float64(a+1) / float64(a+d+2)
	if e, ok := p.explicit[tool]; ok {
		if e > 0 {
			s += e * (1 - s)
		} else {
			s += e * s
		}
	}
	return s
}
