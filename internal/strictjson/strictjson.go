// Package strictjson checks that a request body is exactly one JSON value
// with no duplicate object keys. encoding/json accepts both a trailing
// second value (when decoding with a Decoder) and duplicate keys (the last
// one wins), so `{"n":1,"n":2}` would mean something different to AIRS
// than to a caller whose parser keeps the first: the HTTP server and the
// CLI's --args refuse such input instead of guessing.
//
// Keys that differ only in case are duplicates too: encoding/json matches
// a struct's fields without regard to case, so `{"path":"a","Path":"b"}`
// passes a schema that names "path" and then gives a Go handler "b".
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDepth bounds nesting, as encoding/json does (10000), so a hostile body
// cannot grow the checker's stack without limit.
const MaxDepth = 10000

// What an Error is about (errors.Is): input that is not JSON at all, a
// second value after the first, a key repeated in one object.
var (
	ErrSyntax       = errors.New("invalid JSON")
	ErrTrailingData = errors.New("trailing data")
	ErrDuplicateKey = errors.New("duplicate key")
)

// Error says what is wrong and where: Offset is the byte offset in the
// input, Pointer the JSON pointer of the enclosing value ("" for the root).
type Error struct {
	Kind    error // ErrSyntax, ErrTrailingData or ErrDuplicateKey
	Offset  int64
	Pointer string
	Msg     string
}

func (e *Error) Unwrap() error { return e.Kind }

func (e *Error) Error() string {
	where := "at byte " + strconv.FormatInt(e.Offset, 10)
	if e.Pointer != "" {
		where += " (in " + e.Pointer + ")"
	}
	return e.Msg + " " + where
}

type frame struct {
	object bool
	keys   map[string]string // folded key → the key as written
	key    string            // the current key (object) or index (array)
	index  int
}

// Check returns nil when b is one JSON value, optionally surrounded by
// white space, in which no object has the same key twice (compared after
// unescaping, so "a" and "\u0061" are the same key).
//
// Valid input (the common case) costs json.Valid plus one byte scan for
// keys; only invalid input goes through the Decoder's tokens, which say
// precisely what is wrong but are ~20 times slower.
func Check(b []byte) error {
	if json.Valid(b) {
		return checkKeys(b)
	}
	if err := checkTokens(b); err != nil {
		return err
	}
	return &Error{Kind: ErrSyntax, Msg: "invalid JSON"} // json.Valid's verdict stands
}

// checkKeys finds a repeated key in b, which is valid JSON.
func checkKeys(b []byte) error {
	var stack []*frame
	expectKey := false
	pointerTo := func(n int) string {
		var sb strings.Builder
		for _, f := range stack[:n] {
			sb.WriteByte('/')
			if f.object {
				sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(f.key))
			} else {
				sb.WriteString(strconv.Itoa(f.index))
			}
		}
		return sb.String()
	}
	for i := 0; i < len(b); {
		switch b[i] {
		case '{':
			stack = append(stack, &frame{object: true})
			expectKey = true
			i++
		case '[':
			stack = append(stack, &frame{})
			expectKey = false
			i++
		case '}', ']':
			stack = stack[:len(stack)-1]
			expectKey = false
			i++
		case ',':
			top := stack[len(stack)-1]
			if top.object {
				expectKey = true
			} else {
				top.index++
			}
			i++
		case '"':
			j := i + 1
			escaped := false
			for b[j] != '"' {
				if b[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if expectKey {
				k := string(b[i+1 : j])
				if escaped || !utf8.ValidString(k) {
					// Decoded as the pipeline decodes it: escapes resolved, and
					// invalid UTF-8 as U+FFFD, so "\xac" and "\xbe" are one key.
					_ = json.Unmarshal(b[i:j+1], &k) // valid: json.Valid said so
				}
				top := stack[len(stack)-1]
				if top.keys == nil {
					top.keys = map[string]string{}
				}
				f := FoldKey(k)
				if first, dup := top.keys[f]; dup {
					return &Error{Kind: ErrDuplicateKey, Offset: int64(i), Pointer: pointerTo(len(stack) - 1), Msg: duplicateMsg(first, k)}
				}
				top.keys[f] = k
				top.key = k
				expectKey = false
			}
			i = j + 1
		default: // white space, ':', numbers, true, false, null
			i++
		}
	}
	return nil
}

// checkTokens is Check over the Decoder's tokens, for input json.Valid
// refused: it finds what is wrong and where.
func checkTokens(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // 1e999 is valid JSON; the range is the schema's concern
	var stack []*frame
	// pointerTo is the JSON pointer of the value the first n frames lead
	// to; pointer() the one of the value being read.
	pointerTo := func(n int) string {
		var sb strings.Builder
		for _, f := range stack[:n] {
			sb.WriteByte('/')
			if f.object {
				sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(f.key))
			} else {
				sb.WriteString(strconv.Itoa(f.index))
			}
		}
		return sb.String()
	}
	pointer := func() string { return pointerTo(len(stack)) }
	// expectKey: the next token of the innermost object is a key.
	expectKey := false
	started := false
	for {
		if started && len(stack) == 0 {
			break
		}
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if !started {
					return &Error{Kind: ErrSyntax, Offset: off, Msg: "empty body: want a JSON value"}
				}
				return &Error{Kind: ErrSyntax, Offset: off, Pointer: pointer(), Msg: "unexpected end of JSON"}
			}
			return &Error{Kind: ErrSyntax, Offset: dec.InputOffset(), Pointer: pointer(), Msg: "invalid JSON: " + err.Error()}
		}
		started = true
		if expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				expectKey = afterValue(stack)
				continue
			}
			k := tok.(string) // the decoder guarantees a string key here
			top := stack[len(stack)-1]
			f := FoldKey(k)
			if first, dup := top.keys[f]; dup {
				for off < int64(len(b)) && strings.IndexByte(", \t\r\n", b[off]) >= 0 {
					off++ // point at the key, not the separator before it
				}
				return &Error{Kind: ErrDuplicateKey, Offset: off, Pointer: pointerTo(len(stack) - 1), Msg: duplicateMsg(first, k)}
			}
			top.keys[f] = k
			top.key = k
			expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			if len(stack) >= MaxDepth {
				return &Error{Kind: ErrSyntax, Offset: off, Pointer: pointer(), Msg: "nesting too deep"}
			}
			stack = append(stack, &frame{object: true, keys: map[string]string{}})
			expectKey = true
			continue
		case json.Delim('['):
			if len(stack) >= MaxDepth {
				return &Error{Kind: ErrSyntax, Offset: off, Pointer: pointer(), Msg: "nesting too deep"}
			}
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A scalar or a closed array: a value is complete.
		expectKey = afterValue(stack)
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Kind: ErrTrailingData, Offset: off, Msg: "trailing data after the JSON value (send exactly one JSON value)"}
	}
	return nil
}

// afterValue moves the innermost container past a completed value and says
// whether a key comes next.
func afterValue(stack []*frame) bool {
	if len(stack) == 0 {
		return false
	}
	top := stack[len(stack)-1]
	if top.object {
		return true
	}
	top.index++
	return false
}

// duplicateMsg says which key repeats which.
func duplicateMsg(first, again string) string {
	if first == again {
		return fmt.Sprintf("duplicate key %q", again)
	}
	return fmt.Sprintf("duplicate key %q (the same as %q but for case: JSON decoders match keys without regard to case)", again, first)
}

// FoldKey is k as encoding/json compares it with a struct's field names:
// two keys match there exactly when their FoldKeys are equal. Every rune
// becomes the smallest of its simple case-folding orbit, and an ASCII
// letter its lower case (so "K", "k" and the Kelvin sign are one key); a
// key with no upper-case ASCII letter and nothing beyond ASCII, the common
// case, is its own fold and costs no allocation.
func FoldKey(k string) string {
	plain := true
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return k
	}
	out := make([]byte, 0, len(k))
	for _, r := range k {
		if r >= utf8.RuneSelf {
			for {
				r2 := unicode.SimpleFold(r)
				if r2 <= r {
					r = r2
					break
				}
				r = r2
			}
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}
