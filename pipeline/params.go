package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// DefaultMaxPayload is the params size limit when Config.MaxPayload is 0.
const DefaultMaxPayload = 1 << 20

// decodedParams is stage 1's output: the params as JSON (what handlers get,
// whatever the wire encoding was) and as a value tree for the validator.
type decodedParams struct {
	json  json.RawMessage
	value any // json.Number for numbers, as jsonschema expects
}

// emptyObject is what empty params mean: a call with no arguments.
var emptyObject = json.RawMessage(`{}`)

// decodeParams turns request bytes into decodedParams. Errors are returned
// as SchemaValidationFailed at the document root: malformed params are a
// caller mistake of the same nature as a schema violation.
//
// MessagePack is decoded to a generic value and re-encoded as JSON, so the
// validator and the handler see exactly one representation. What has no JSON
// counterpart is refused: non-string map keys, NaN/±Inf, extension types
// (except the timestamp extension, which becomes an RFC 3339 string); binary
// strings become base64 JSON strings, as encoding/json writes []byte.
func decodeParams(tool string, b []byte, enc Encoding) (decodedParams, error) {
	switch enc {
	case JSON:
		if len(bytes.TrimSpace(b)) == 0 {
			b = emptyObject
		}
		v, err := decodeJSON(b)
		if err != nil {
			return decodedParams{}, paramsError(tool, "params are not valid JSON: "+err.Error())
		}
		return decodedParams{json: b, value: v}, nil
	case MsgPack:
		if len(b) == 0 {
			v, _ := decodeJSON(emptyObject)
			return decodedParams{json: emptyObject, value: v}, nil
		}
		js, err := msgpackToJSON(b)
		if err != nil {
			return decodedParams{}, paramsError(tool, "params are not valid MessagePack: "+err.Error())
		}
		v, err := decodeJSON(js)
		if err != nil { // cannot happen for what json.Marshal wrote, but be safe
			return decodedParams{}, paramsError(tool, "params are not valid JSON: "+err.Error())
		}
		return decodedParams{json: js, value: v}, nil
	}
	return decodedParams{}, paramsError(tool, fmt.Sprintf("unknown params encoding %d", enc))
}

func paramsError(tool, msg string) error {
	return &SchemaValidationFailed{Tool: tool, Errors: []FieldError{{Pointer: "", Message: msg}}}
}

// decodeJSON decodes exactly one JSON value, keeping numbers exact
// (json.Number) and refusing trailing data and invalid UTF-8: what the
// validator checks must be exactly what the handler will parse.
func decodeJSON(b []byte) (any, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("invalid UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	if err := checkNumbers(v, 0); err != nil {
		return nil, err
	}
	return v, nil
}

// checkNumbers refuses numbers outside float64's range (RFC 8259 §6: the
// interoperable range). The validator compares numbers as big.Rat, which
// cannot represent 1e99999999 (jsonschema/v6 then dereferences nil and
// panics) and would spend seconds expanding 1e-9999999; neither belongs in
// a tool call.
func checkNumbers(v any, depth int) error {
	if depth > maxDepth {
		return errors.New("nesting too deep")
	}
	switch t := v.(type) {
	case json.Number:
		s := string(t)
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
			if err != nil || exp > 400 || exp < -400 {
				return fmt.Errorf("number %.40s is out of range", s)
			}
		}
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return fmt.Errorf("number %.40s is out of range", s)
		}
	case map[string]any:
		for _, e := range t {
			if err := checkNumbers(e, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range t {
			if err := checkNumbers(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func msgpackToJSON(b []byte) ([]byte, error) {
	r := bytes.NewReader(b)
	d := msgpack.NewDecoder(r)
	d.UseLooseInterfaceDecoding(true) // int64/uint64/float64 for scalars
	v, err := decodeMsgpackValue(d, r, 0)
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, errors.New("trailing data after the MessagePack value")
	}
	nv, err := normalizeMsgpack(v, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(nv)
}

// decodeMsgpackValue walks maps and arrays itself instead of letting the
// library do it: the library preallocates from the declared length, so a
// 5-byte header claiming 2^32 entries would allocate gigabytes (found by
// FuzzDecodeMsgPackParams). Every entry takes at least one byte, so a
// declared length larger than the bytes left is refused before allocating.
func decodeMsgpackValue(d *msgpack.Decoder, r *bytes.Reader, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nesting too deep")
	}
	c, err := d.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err := d.DecodeMapLen()
		if err != nil {
			return nil, err
		}
		if n < 0 || 2*n > r.Len() {
			return nil, fmt.Errorf("map of %d entries in %d bytes", n, r.Len())
		}
		m := make(map[string]any, n)
		for range n {
			if kc, err := d.PeekCode(); err != nil {
				return nil, err
			} else if !msgpcode.IsString(kc) {
				return nil, fmt.Errorf("map key of type 0x%02x is not a string", kc)
			}
			k, err := d.DecodeString()
			if err != nil {
				return nil, err
			}
			v, err := decodeMsgpackValue(d, r, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := d.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		if n < 0 || n > r.Len() {
			return nil, fmt.Errorf("array of %d items in %d bytes", n, r.Len())
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = decodeMsgpackValue(d, r, depth+1); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	return d.DecodeInterfaceLoose()
}

// maxDepth bounds nesting so a hostile payload cannot blow the stack.
const maxDepth = 256

func normalizeMsgpack(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nesting too deep")
	}
	switch t := v.(type) {
	case nil, bool, string, int64, uint64, []byte:
		return t, nil
	case int8, int16, int32, int, uint8, uint16, uint32, uint:
		return t, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, errors.New("NaN or Inf has no JSON form")
		}
		return t, nil
	case float32:
		return normalizeMsgpack(float64(t), depth)
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano), nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			ne, err := normalizeMsgpack(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = ne
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			ne, err := normalizeMsgpack(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = ne
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			ne, err := normalizeMsgpack(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[ks] = ne
		}
		return out, nil
	}
	return nil, fmt.Errorf("MessagePack type %T has no JSON form", v)
}
