// Package grammar compiles JSON Schemas (draft 2020-12) into automata that
// constrain a language model's output to JSON valid by construction, and
// computes token masks over real vocabularies.
//
// # Pipeline
//
// Like Go's regexp/syntax, each stage is one type with one job:
//
//	schema JSON ──parse──► schema tree (ordered keys, JSON pointers)
//	            ──lower──► IR: per JSON type, a constraint (string and number
//	                        constraints are regular languages over code points)
//	            ──build──► rules: one byte-level DFA per object/array shape and one
//	                        for the root value; strings, numbers and literals are
//	                        inlined as byte paths; nested containers are calls
//	            ──run────► Matcher (bytes) / TokenMatcher (tokens, masks)
//
// A rule's DFA is deterministic on its plain edges. Three things are not
// regular and are done by the small stack machine that runs the rules:
// calls into nested containers (the stack is the JSON nesting), per-object
// bookkeeping (which declared properties were seen, for required,
// duplicates, min/maxProperties, dependentRequired) and per-array item counts
// (min/maxItems). Those are "checked edges": the DFA says where they happen,
// the runtime checks them. A check asks not only whether the property or
// item is allowed but whether the output can still be completed after it
// (the required properties still fit maxProperties, the declared order
// leaves them writable, a string has the code points left for what its
// pattern still needs), so no accepted prefix is a dead end. When a schema
// is ambiguous (anyOf of two object shapes), the matcher keeps a small set
// of configurations, like a Thompson NFA simulation of a pushdown
// automaton.
//
// # Faithfulness and formatting
//
// What a Grammar accepts is a subset of what a 2020-12 validator (with
// format assertion on) accepts, and equals it up to these formatting choices:
//
//   - Whitespace: Options.Whitespace = WhitespaceCompact (default) allows no
//     whitespace at all; WhitespaceFlexible allows 0..MaxWhitespace bytes of
//     JSON whitespace (space, \t, \n, \r) at every place JSON allows it.
//   - Strings: raw UTF-8 except the characters JSON requires escaped ('"', '\\',
//     controls), which use the short escapes \" \\ \n \r \t \b \f or \u00XX;
//     "\/" is also accepted. Other \uXXXX escapes are not accepted. Strings
//     without maxLength are bounded to Options.MaxStringBytes code points
//     (default 8192; object keys too), or to the shortest string their
//     minLength, pattern or format allows if that is longer.
//   - Numbers: JSON number syntax with at most Options.MaxNumberDigits digits
//     in the integer part and in the fraction (default 20 each) and a 1..3
//     digit exponent. Integer-typed values are written without fraction or
//     exponent (2020-12 also calls 1.0 an integer; such lexemes are rejected).
//     Bounded numbers (minimum/maximum...) are written without an exponent.
//   - Objects: a declared property may appear once. Options.PropertyOrder =
//     AnyOrder (default) or DeclaredOrder (properties in "properties" order,
//     undeclared ones anywhere). Options.Strict forbids undeclared properties
//     even where the schema allows them.
//   - Depth: containers nest at most Options.MaxDepth deep (default 32).
//
// uniqueItems is enforced exactly when the items come from a small finite set
// of values (an enum, booleans, a bounded integer range: the array rule's
// state is the set of values used), when at most one item fits, and when the
// items are strings, objects or arrays every prefix of which has infinitely
// many completions (no maxLength, objects that can always take another
// property, arrays another item): the matcher keeps the items written and
// refuses the byte that would end a duplicate, comparing values decoded and
// canonically (unique.go). Under the generation bounds (MaxStringBytes,
// MaxContainerItems) an item that reaches its bound equal to an earlier item
// cannot be finished; the schema's own constraints never lead there.
//
// contains (contains.go), not (negate.go), if/then/else and overlapping oneOf
// (as B ∧ ¬C with exact complements) are enforced exactly in their common
// forms, and a pattern's lookahead by automaton intersection where the rest
// of the pattern is a sequence, an alternation or an optional group
// (lookahead.go).
//
// A form that cannot be enforced exactly (uniqueItems over numbers or closed
// objects, a not or oneOf without an exact complement, unevaluated*,
// maxContains, remote $ref, lookahead in a repetition, lookbehind or a
// backreference in a pattern, a size budget exceeded, ...) is a *CompileError
// naming the keyword and the JSON pointer, unless Options.Lenient is set:
// then the keyword is dropped or approximated and reported in
// Grammar.Loosened (and the output must be validated afterwards). Annotations
// ($comment, title, description, default, examples, deprecated, readOnly,
// unknown keywords) are ignored.
//
// # Matching
//
// Matcher advances byte by byte (Advance, AdvanceBytes), rolls back
// (Rollback, Snapshot/Restore), reports completion (IsAccepting) and the
// bytes the grammar forces next (Forced). StreamChecker wraps a Matcher as an
// io.Writer for a model's streamed output and reports the first offending
// byte offset.
//
// TokenMatcher does the same per token over a TokenizerInfo (a vocabulary
// with its token trie, built once per *Vocab and cached). FillMask writes the
// allowed token ids as a bitset; per automaton state most of that bitset is
// precomputed lazily and cached (tokens whose fate depends only on the state),
// and only the few tokens that cross a checked edge, a call or a return are
// simulated at run time. See docs/masks.md.
//
// # Tool calls
//
// ToolCall builds the grammar of
//
//	{"function":"<name>","arguments":<that tool's parameters>}
//
// over a set of tools; once the name is emitted only that tool's schema is
// live. With ToolCallOptions.AllowNone the model may also emit exactly
//
//	{"function":"none","arguments":{}}
//
// to decline. Per-tool grammars are cached by schema hash and options
// (CompileCached) and kept whole as segments of the tool-call grammar; a
// tool's automata are built when a matcher first completes its name
// (ToolCallOptions.Eager and Grammar.Build build them all), while every
// compile error of its keywords is reported by ToolCall.
//
// # Formats
//
// date-time, date, time, duration, email, hostname, ipv4, ipv6, uuid, uri,
// uri-reference, iri, iri-reference, json-pointer, relative-json-pointer are
// enforced by regular languages that are subsets of what RFC checks accept
// (no leap seconds; hostnames of at most 5 labels; email domains of at most
// 4 labels; IPv6 without embedded IPv4). Unknown formats are annotations.
// uri-template, regex, semver, period are errors (Lenient: ignored).
//
// The package is pure Go, has no cgo, and imports nothing else from AIRS.
package grammar
