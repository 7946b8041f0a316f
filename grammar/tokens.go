package grammar

// TokenizerInfo is a vocabulary prepared for masks: its token trie and byte
// tables. Built once per *Vocab (NewTokenizerInfo caches it); safe for
// concurrent use.
type TokenizerInfo struct{ v *Vocab }

// NewTokenizerInfo returns the (cached) TokenizerInfo of v. v must not be
// modified afterwards.
func NewTokenizerInfo(v *Vocab) *TokenizerInfo { panic("todo") }

// Vocab returns the vocabulary.
func (ti *TokenizerInfo) Vocab() *Vocab { return ti.v }

// MaskWords is the number of uint64 words of a mask for this vocabulary.
func (ti *TokenizerInfo) MaskWords() int { return (ti.v.Size + 63) / 64 }

// TokenMatcher runs a Grammar over tokens of a vocabulary. Not safe for
// concurrent use; many TokenMatchers may share a Grammar and TokenizerInfo.
type TokenMatcher struct{ g *Grammar }

// NewTokenMatcher returns a token matcher at the start of the grammar.
func (g *Grammar) NewTokenMatcher(ti *TokenizerInfo) *TokenMatcher { panic("todo") }

// FillMask sets bits (len ≥ MaskWords) to the allowed next tokens: bit id of
// word id/64. EOS ids are allowed only when the output is complete; special
// tokens never; after EOS was accepted nothing is allowed.
func (tm *TokenMatcher) FillMask(bits []uint64) { panic("todo") }

// Accept consumes token id; false (and no change) if it is not allowed.
func (tm *TokenMatcher) Accept(id int) bool { panic("todo") }

// AcceptBytes consumes raw bytes as one step (e.g. forced bytes); false
// (and no change) if they are not allowed.
func (tm *TokenMatcher) AcceptBytes(p []byte) bool { panic("todo") }

// IsAccepting reports whether the output so far is complete (EOS allowed).
func (tm *TokenMatcher) IsAccepting() bool { panic("todo") }

// IsTerminated reports whether an EOS token was accepted.
func (tm *TokenMatcher) IsTerminated() bool { panic("todo") }

// Steps is the number of steps (tokens or AcceptBytes calls) accepted.
func (tm *TokenMatcher) Steps() int { panic("todo") }

// Rollback undoes the last n steps.
func (tm *TokenMatcher) Rollback(n int) { panic("todo") }

// Reset returns to the start.
func (tm *TokenMatcher) Reset() { panic("todo") }

// Forced returns the bytes the grammar forces next (see Matcher.Forced).
func (tm *TokenMatcher) Forced() []byte { panic("todo") }
