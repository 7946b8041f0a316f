package grammar

import "fmt"

// Matcher runs a Grammar over bytes. Not safe for concurrent use.
type Matcher struct {
	g    *Grammar
	cur  []cfg
	hist [][]cfg // hist[i]: configurations before byte i
	out  []byte  // the bytes consumed (runCtx)
}

// Snapshot is a matcher position that Restore returns to.
type Snapshot struct{ pos int }

// NewMatcher returns a matcher at the start of the grammar.
func (g *Grammar) NewMatcher() *Matcher {
	return &Matcher{g: g, cur: g.initial()}
}

// Advance consumes one byte; false (and no change) if the grammar does not
// allow it here.
func (m *Matcher) Advance(b byte) bool {
	next := m.g.step(m.cur, b, nil, &runCtx{base: m.out})
	if len(next) == 0 {
		return false
	}
	m.hist = append(m.hist, m.cur)
	m.cur = next
	m.out = append(m.out, b)
	return true
}

// AdvanceBytes consumes p byte by byte and returns how many bytes were
// accepted; ok is n == len(p). On failure the matcher stays after the
// accepted prefix.
func (m *Matcher) AdvanceBytes(p []byte) (n int, ok bool) {
	for i, b := range p {
		if !m.Advance(b) {
			return i, false
		}
	}
	return len(p), true
}

// IsAccepting reports whether the bytes so far form a complete sentence.
func (m *Matcher) IsAccepting() bool { return m.g.accepting(m.cur) }

// CanContinue reports whether some byte may follow.
func (m *Matcher) CanContinue() bool {
	var buf []cfg
	for b := 0; b < 256; b++ {
		if buf = m.g.step(m.cur, byte(b), buf[:0], &runCtx{base: m.out}); len(buf) > 0 {
			return true
		}
	}
	return false
}

// Len is the number of bytes consumed.
func (m *Matcher) Len() int { return len(m.hist) }

// Rollback un-consumes the last n bytes (n ≤ Len()).
func (m *Matcher) Rollback(n int) {
	if n <= 0 {
		return
	}
	if n > len(m.hist) {
		n = len(m.hist)
	}
	k := len(m.hist) - n
	m.cur = m.hist[k]
	m.hist = m.hist[:k]
	m.out = m.out[:k]
}

// Snapshot returns the current position; Restore goes back to it.
func (m *Matcher) Snapshot() Snapshot { return Snapshot{len(m.hist)} }

// Restore returns to a snapshot taken on this matcher at or before now.
func (m *Matcher) Restore(s Snapshot) { m.Rollback(len(m.hist) - s.pos) }

// Reset returns to the start.
func (m *Matcher) Reset() {
	m.cur = m.g.initial()
	m.hist = nil
	m.out = m.out[:0]
}

// Forced returns the bytes every continuation must start with (jump-ahead);
// empty when there is a choice or the sentence may end here.
func (m *Matcher) Forced() []byte { return m.g.forced(m.cur, 4096, m.out) }

// StreamChecker checks a stream of output bytes against a Grammar. It is an
// io.Writer: Write returns an *OffendingByteError at the first byte that
// leaves the grammar, and Close reports an incomplete sentence.
type StreamChecker struct {
	m   *Matcher
	off int
	err *OffendingByteError
}

// OffendingByteError says where a stream left the grammar.
type OffendingByteError struct {
	Offset int  // offset of the first offending byte in the whole stream
	Byte   byte // that byte
}

func (e *OffendingByteError) Error() string {
	return fmt.Sprintf("grammar: byte %q at offset %d leaves the grammar", e.Byte, e.Offset)
}

// NewStreamChecker returns a checker at the start of the grammar.
func (g *Grammar) NewStreamChecker() *StreamChecker { return &StreamChecker{m: g.NewMatcher()} }

// Write consumes p; at the first offending byte it returns the bytes
// accepted from p and an *OffendingByteError. Later writes fail the same way.
func (s *StreamChecker) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	for i, b := range p {
		next := s.m.g.step(s.m.cur, b, nil, &runCtx{base: s.m.out})
		if len(next) == 0 {
			s.err = &OffendingByteError{Offset: s.off, Byte: b}
			return i, s.err
		}
		s.m.cur = next // no history: streams do not roll back
		s.m.out = append(s.m.out, b)
		s.off++
	}
	return len(p), nil
}

// Offset is the number of bytes accepted so far.
func (s *StreamChecker) Offset() int { return s.off }

// Complete reports whether the bytes so far form a complete sentence.
func (s *StreamChecker) Complete() bool { return s.err == nil && s.m.IsAccepting() }

// Close returns nil when the stream is a complete sentence, else an error.
func (s *StreamChecker) Close() error {
	if s.err != nil {
		return s.err
	}
	if !s.m.IsAccepting() {
		return fmt.Errorf("grammar: stream ended after %d bytes before the value was complete", s.off)
	}
	return nil
}
