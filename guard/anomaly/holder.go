package anomaly

import "sync/atomic"

// Holder is the model a running airs scores with, swapped without a
// restart: Set (or Reload) replaces it atomically, and a call scores with
// whichever model it loaded, never a mix. An optional candidate model
// scores a fixed share of callers (the seed's A/B partition: by a hash of
// the caller, so one caller always sees the same model), and each score
// names the model's version for the audit record.
type Holder struct {
	cur atomic.Pointer[slot]
}

type slot struct {
	main, candidate *Model
	share           uint32 // of 1<<16 callers to the candidate
}

// Set installs a model (nil turns scoring off) and drops any candidate.
func (h *Holder) Set(m *Model) { h.cur.Store(&slot{main: m}) }

// SetCandidate has the candidate score share (0–1) of callers beside the
// current model.
func (h *Holder) SetCandidate(c *Model, share float64) {
	old := h.cur.Load()
	s := &slot{candidate: c, share: uint32(share * 65536)}
	if old != nil {
		s.main = old.main
	}
	h.cur.Store(s)
}

// Reload reads path and installs it; on error the current model stays.
func (h *Holder) Reload(path string) error {
	m, err := Load(path)
	if err != nil {
		return err
	}
	h.Set(m)
	return nil
}

// Score is the call's score (0–255) and the version of the model that gave
// it; "" and 0 with no model.
func (h *Holder) Score(f Features) (uint8, string) {
	s := h.cur.Load()
	if s == nil {
		return 0, ""
	}
	m := s.main
	if s.candidate != nil && s.share > 0 {
		if fnv32a(f.Caller)&0xffff < s.share {
			m = s.candidate
		}
	}
	if m == nil {
		return 0, ""
	}
	return m.Score(f), m.version
}

// Versions are the installed models' versions ("" none).
func (h *Holder) Versions() (main, candidate string) {
	s := h.cur.Load()
	if s == nil {
		return "", ""
	}
	if s.main != nil {
		main = s.main.version
	}
	if s.candidate != nil {
		candidate = s.candidate.version
	}
	return main, candidate
}

// fnv32a is FNV-1a, inline so a score allocates nothing.
func fnv32a(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// Main is the installed main model (nil: none).
func (h *Holder) Main() *Model {
	if s := h.cur.Load(); s != nil {
		return s.main
	}
	return nil
}
