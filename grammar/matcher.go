package grammar

// Matcher runs a Grammar over bytes. Not safe for concurrent use.
type Matcher struct{ g *Grammar }

// Snapshot is a matcher position that Restore returns to.
type Snapshot struct{ pos int }

// NewMatcher returns a matcher at the start of the grammar.
func (g *Grammar) NewMatcher() *Matcher { panic("todo") }

// Advance consumes one byte; false (and no change) if the grammar does not
// allow it here.
func (m *Matcher) Advance(b byte) bool { panic("todo") }

// AdvanceBytes consumes p byte by byte and returns how many bytes were
// accepted; ok is n == len(p). On failure the matcher stays after the
// accepted prefix.
func (m *Matcher) AdvanceBytes(p []byte) (n int, ok bool) { panic("todo") }

// IsAccepting reports whether the bytes so far form a complete sentence.
func (m *Matcher) IsAccepting() bool { panic("todo") }

// CanContinue reports whether some byte may follow.
func (m *Matcher) CanContinue() bool { panic("todo") }

// Len is the number of bytes consumed.
func (m *Matcher) Len() int { panic("todo") }

// Rollback un-consumes the last n bytes (n ≤ Len()).
func (m *Matcher) Rollback(n int) { panic("todo") }

// Snapshot returns the current position; Restore goes back to it.
func (m *Matcher) Snapshot() Snapshot { panic("todo") }

// Restore returns to a snapshot taken on this matcher at or before now.
func (m *Matcher) Restore(s Snapshot) { panic("todo") }

// Reset returns to the start.
func (m *Matcher) Reset() { panic("todo") }

// Forced returns the bytes every continuation must start with (jump-ahead);
// empty when there is a choice or the sentence may end here.
func (m *Matcher) Forced() []byte { panic("todo") }

// StreamChecker checks a stream of output bytes against a Grammar. It is an
// io.Writer: Write returns an *OffendingByteError at the first byte that
// leaves the grammar, and Close reports an incomplete sentence.
type StreamChecker struct{ m *Matcher }

// OffendingByteError says where a stream left the grammar.
type OffendingByteError struct {
	Offset int  // offset of the first offending byte in the whole stream
	Byte   byte // that byte
}

func (e *OffendingByteError) Error() string { panic("todo") }

// NewStreamChecker returns a checker at the start of the grammar.
func (g *Grammar) NewStreamChecker() *StreamChecker { panic("todo") }

// Write consumes p; at the first offending byte it returns the bytes
// accepted from p and an *OffendingByteError. Later writes fail the same way.
func (s *StreamChecker) Write(p []byte) (int, error) { panic("todo") }

// Offset is the number of bytes accepted so far.
func (s *StreamChecker) Offset() int { panic("todo") }

// Complete reports whether the bytes so far form a complete sentence.
func (s *StreamChecker) Complete() bool { panic("todo") }

// Close returns nil when the stream is a complete sentence, else an error.
func (s *StreamChecker) Close() error { panic("todo") }
