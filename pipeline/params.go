package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
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
	return v, nil
}

func msgpackToJSON(b []byte) ([]byte, error) {
	d := msgpack.NewDecoder(bytes.NewReader(b))
	d.UseLooseInterfaceDecoding(true) // int64/uint64/float64 at every depth
	v, err := d.DecodeInterface()
	if err != nil {
		return nil, err
	}
	if _, err := d.PeekCode(); err != io.EOF {
		return nil, errors.New("trailing data after the MessagePack value")
	}
	nv, err := normalizeMsgpack(v, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(nv)
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
