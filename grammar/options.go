package grammar

import "fmt"

// WhitespaceMode says where the grammar lets whitespace appear.
type WhitespaceMode int

const (
	// WhitespaceCompact allows no whitespace outside strings (the default).
	WhitespaceCompact WhitespaceMode = iota
	// WhitespaceFlexible allows 0..Options.MaxWhitespace bytes of JSON
	// whitespace (space, \t, \n, \r) wherever JSON allows whitespace.
	WhitespaceFlexible
)

// PropertyOrder says in which order object properties may appear.
type PropertyOrder int

const (
	// AnyOrder accepts declared properties in any order (the default).
	AnyOrder PropertyOrder = iota
	// DeclaredOrder requires declared properties in "properties" order;
	// undeclared properties (where allowed) may appear anywhere.
	DeclaredOrder
)

// Options control compilation. The zero value is the default: compact JSON,
// any property order, faithful (not strict), not lenient, default bounds.
type Options struct {
	Whitespace    WhitespaceMode
	MaxWhitespace int // bytes per whitespace gap in WhitespaceFlexible; default 8
	PropertyOrder PropertyOrder
	// Strict forbids undeclared object properties and array items beyond
	// prefixItems even where the schema allows them (for generation).
	Strict bool
	// Lenient drops or approximates keywords that cannot be enforced instead
	// of failing; Grammar.Loosened lists what was loosened.
	Lenient bool
	// MaxStringBytes bounds the length, in code points, of strings (values
	// and keys) that have no maxLength; default 8192. Negative means
	// unbounded. (The name is kept for compatibility.)
	MaxStringBytes int
	// MaxNumberDigits bounds the digits of the integer part and of the
	// fraction of numbers; default 20.
	MaxNumberDigits int
	// MaxDepth bounds container nesting; default 32.
	MaxDepth int
	// MaxContainerItems bounds the items of arrays and the properties of
	// objects that have no maxItems/maxProperties, declared ones (type
	// array/object, items, properties, …) and those of values the schema
	// leaves open ({} or true, undeclared properties). 0 (the default)
	// leaves them unbounded, as the schema says; a generation grammar sets
	// it so that a model cannot emit an endless list.
	MaxContainerItems int
}

func (o Options) withDefaults() Options {
	if o.MaxWhitespace <= 0 {
		o.MaxWhitespace = 8
	}
	if o.MaxStringBytes == 0 {
		o.MaxStringBytes = 8192
	}
	if o.MaxNumberDigits <= 0 {
		o.MaxNumberDigits = 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 32
	}
	return o
}

func (o Options) key() string {
	o = o.withDefaults()
	return fmt.Sprintf("w%d/%d o%d s%t l%t sb%d nd%d d%d ci%d", o.Whitespace, o.MaxWhitespace, o.PropertyOrder, o.Strict, o.Lenient, o.MaxStringBytes, o.MaxNumberDigits, o.MaxDepth, o.MaxContainerItems)
}

// CompileError is a schema the compiler cannot enforce exactly: Keyword at
// JSON pointer Pointer (RFC 6901, "" for the root).
type CompileError struct {
	Pointer string
	Keyword string
	Msg     string
}

func (e *CompileError) Error() string {
	if e.Keyword == "" {
		return fmt.Sprintf("grammar: at %q: %s", e.Pointer, e.Msg)
	}
	return fmt.Sprintf("grammar: %s at %q: %s", e.Keyword, e.Pointer, e.Msg)
}

// Loosening records a keyword that Lenient compilation dropped or
// approximated: output must be validated after generation.
type Loosening struct {
	Pointer string
	Keyword string
	Msg     string
}
