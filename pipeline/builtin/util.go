package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// jsonUnmarshal decodes one JSON value strictly: unknown fields and trailing
// data are errors. The Manager validates parameters against the tool's
// schema before dispatch; handlers decode strictly anyway so that a handler
// used without the Manager (tests, other hosts) cannot be fed junk.
func jsonUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// decodeParams decodes a call's parameters, rejecting bad ones. Decoding
// is the one step of a handler that does not check ctx: it is bounded by
// the Manager's payload limit (1 MiB by default), and it is where the
// handler's loops start to (testHookDecoded marks the point for tests).
func decodeParams(ctx context.Context, params []byte, v any) error {
	if len(bytes.TrimSpace(params)) == 0 {
		params = []byte("{}")
	}
	if err := jsonUnmarshal(params, v); err != nil {
		return reject(CodeBadParams, "parameters: %v", err)
	}
	if testHookDecoded != nil {
		testHookDecoded(ctx)
	}
	return nil
}

// testHookDecoded, set only by tests, runs when a handler has decoded its
// parameters: from there on, every loop honours ctx.
var testHookDecoded func(ctx context.Context)

// result encodes a handler's output.
func result(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	return b, nil
}

// schema compacts a JSON Schema literal written readably in the source and
// panics if it is not valid JSON (a programming error caught by any test).
func schema(s string) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		panic("builtin: bad schema literal: " + err.Error())
	}
	return buf.Bytes()
}
