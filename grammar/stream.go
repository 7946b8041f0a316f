package grammar

// WhitespaceChecker checks a model's streamed output against a compact
// grammar while tolerating bounded JSON whitespace between tokens, the way a
// grammar compiled with WhitespaceFlexible would — without compiling one.
//
// Why: flexible whitespace is unrolled into every rule's DFA (a chain of
// MaxWhitespace states at each place JSON allows whitespace), which makes a
// 50-tool grammar several times larger and slower to build. A stream
// checker needs no token masks, so whitespace can be handled lexically
// instead: outside strings, whitespace bytes are not fed to the grammar,
// only counted. That is exact because JSON allows whitespace only between
// tokens, and the only tokens that would merge when it is removed are two
// scalars (numbers, true/false/null): "1 2" must not become "12". So a
// whitespace run is accepted when it is at most max bytes long and does not
// separate two scalar bytes; everything else goes to the grammar. The first
// whitespace byte of a run is rejected at once when no token may follow it,
// so the offending offset is the one the flexible grammar reports
// (TestWhitespaceCheckerMatchesFlexible checks both on random documents).
type WhitespaceChecker struct {
	StreamChecker // Offset, Complete and Close are the plain checker's
	max           int

	inStr, esc bool
	run        int  // whitespace bytes pending since the last token byte
	lastScalar bool // the last byte fed was part of a number or literal
}

// NewWhitespaceChecker returns a checker at the start of the grammar that
// also accepts runs of at most max JSON whitespace bytes (space, \t, \n, \r)
// between tokens, where WhitespaceFlexible would: not before the value nor
// after it, and not where no token can follow.
func (g *Grammar) NewWhitespaceChecker(max int) *WhitespaceChecker {
	return &WhitespaceChecker{StreamChecker: StreamChecker{m: g.NewMatcher()}, max: max}
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// isScalarByte: a byte of a number or of true/false/null.
func isScalarByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '.' || b == '+' || b == '-'
}

// Write consumes p; at the first offending byte it returns the bytes
// accepted from p and an *OffendingByteError. Later writes fail the same way.
func (s *WhitespaceChecker) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	for i, b := range p {
		if !s.inStr && isJSONSpace(b) {
			s.run++
			if s.run > s.max || s.run == 1 && !s.tokenMayFollow() {
				return i, s.fail(b)
			}
			s.off++
			continue
		}
		if !s.inStr && s.run > 0 && s.lastScalar && isScalarByte(b) {
			return i, s.fail(b) // whitespace inside a number or literal
		}
		next := s.m.g.step(s.m.cur, b, nil, &runCtx{base: s.m.out})
		if len(next) == 0 {
			return i, s.fail(b)
		}
		s.m.cur = next
		s.m.out = append(s.m.out, b)
		s.off++
		s.run = 0
		switch {
		case s.inStr && s.esc:
			s.esc = false
		case s.inStr && b == '\\':
			s.esc = true
		case b == '"':
			s.inStr = !s.inStr
		}
		s.lastScalar = !s.inStr && isScalarByte(b)
	}
	return len(p), nil
}

// tokenMayFollow reports whether a token may come after whitespace here:
// not before the value, and not where only a scalar byte (which would merge
// into the scalar before the whitespace) or nothing at all may follow.
func (s *WhitespaceChecker) tokenMayFollow() bool {
	if s.off == 0 {
		return false
	}
	var buf []cfg
	for b := 0; b < 256; b++ {
		c := byte(b)
		if isJSONSpace(c) || s.lastScalar && isScalarByte(c) {
			continue
		}
		if buf = s.m.g.step(s.m.cur, c, buf[:0], &runCtx{base: s.m.out}); len(buf) > 0 {
			return true
		}
	}
	return false
}

func (s *WhitespaceChecker) fail(b byte) error {
	s.err = &OffendingByteError{Offset: s.off, Byte: b}
	return s.err
}
