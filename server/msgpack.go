package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/airs-dev/airs/internal/strictjson"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// maxMsgpackDepth bounds nesting in a MessagePack body, as the pipeline
// bounds it in params.
const maxMsgpackDepth = 256

// checkMsgpack is strictjson.Check for MessagePack: b is exactly one map
// whose keys, at any depth, are strings and distinct. Lengths are checked
// against the bytes left before anything is allocated (a 5-byte header may
// claim 2^32 entries).
func checkMsgpack(b []byte) error {
	r := bytes.NewReader(b)
	d := msgpack.NewDecoder(r)
	c, err := d.PeekCode()
	if err != nil {
		return errors.New("empty body: want a MessagePack map")
	}
	if !isMap(c) {
		return fmt.Errorf("want a map at the top, not type 0x%02x", c)
	}
	if err := walkMsgpack(d, r, "", 0); err != nil {
		return err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d bytes of trailing data after the map (send exactly one value)", r.Len())
	}
	return nil
}

func isMap(c byte) bool { return msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32 }
func isArray(c byte) bool {
	return msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32
}

func walkMsgpack(d *msgpack.Decoder, r *bytes.Reader, at string, depth int) error {
	if depth > maxMsgpackDepth {
		return fmt.Errorf("nesting too deep at %q", at)
	}
	c, err := d.PeekCode()
	if err != nil {
		return fmt.Errorf("at %q: %v", at, err)
	}
	switch {
	case isMap(c):
		n, err := d.DecodeMapLen()
		if err != nil {
			return fmt.Errorf("at %q: %v", at, err)
		}
		if n < 0 || 2*n > r.Len() {
			return fmt.Errorf("at %q: a map of %d entries in %d bytes", at, n, r.Len())
		}
		seen := make(map[string]string, n) // folded key → the key as written
		for range n {
			kc, err := d.PeekCode()
			if err != nil {
				return fmt.Errorf("at %q: %v", at, err)
			}
			if !msgpcode.IsString(kc) {
				return fmt.Errorf("at %q: a map key of type 0x%02x (keys must be strings)", at, kc)
			}
			k, err := d.DecodeString()
			if err != nil {
				return fmt.Errorf("at %q: %v", at, err)
			}
			f := strictjson.FoldKey(k)
			if first, dup := seen[f]; dup {
				if first != k {
					return fmt.Errorf("duplicate key %q at %q (the same as %q but for case)", k, at, first)
				}
				return fmt.Errorf("duplicate key %q at %q", k, at)
			}
			seen[f] = k
			if err := walkMsgpack(d, r, at+"/"+k, depth+1); err != nil {
				return err
			}
		}
	case isArray(c):
		n, err := d.DecodeArrayLen()
		if err != nil {
			return fmt.Errorf("at %q: %v", at, err)
		}
		if n < 0 || n > r.Len() {
			return fmt.Errorf("at %q: an array of %d items in %d bytes", at, n, r.Len())
		}
		for i := range n {
			if err := walkMsgpack(d, r, at+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
	case msgpcode.IsExt(c):
		// Only the timestamp extension has a JSON form (the pipeline makes
		// it an RFC 3339 string); the library refuses unknown ones.
		v, err := d.DecodeInterfaceLoose()
		if _, isTime := v.(time.Time); err != nil || !isTime {
			return fmt.Errorf("at %q: an extension type with no JSON form", at)
		}
	default:
		if err := d.Skip(); err != nil {
			return fmt.Errorf("at %q: %v", at, err)
		}
	}
	return nil
}

// toMsgpack encodes an answer as MessagePack with the shape its JSON has
// (the same keys, json tags and all; raw JSON such as a tool's output
// becomes maps and arrays, not a string): v goes through encoding/json
// first. Integers stay integers, other numbers are float64.
func toMsgpack(v any) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(numbers(tree)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// numbers replaces json.Number (a string to msgpack) by int64 or float64.
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(t), 10, 64); err == nil {
			return u
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	}
	return v
}
