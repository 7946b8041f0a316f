package session

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// RedactedValue replaces a redacted value (the same marker the config
// package documents).
const RedactedValue = "[redacted]"

// Redactor replaces the values of configured parameter names, compared
// case-insensitively, at any depth of a call's arguments.
type Redactor struct {
	keys map[string]bool
}

// NewRedactor builds a Redactor for the given names; with none, it does
// nothing.
func NewRedactor(names []string) *Redactor {
	r := &Redactor{keys: map[string]bool{}}
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			r.keys[strings.ToLower(n)] = true
		}
	}
	return r
}

func (r *Redactor) active() bool { return r != nil && len(r.keys) > 0 }

// Value returns a copy of v with the values under redacted keys replaced,
// and the JSON-pointer-like paths it replaced (prefixed with path).
func (r *Redactor) Value(v any, path string) (any, []string) {
	if !r.active() {
		return v, nil
	}
	var hits []string
	out := r.walk(v, path, &hits)
	return out, hits
}

func (r *Redactor) walk(v any, path string, hits *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "/" + k
			if r.keys[strings.ToLower(k)] {
				out[k] = RedactedValue
				*hits = append(*hits, p)
				continue
			}
			out[k] = r.walk(x[k], p, hits)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.walk(e, path+"/"+itoa(i), hits)
		}
		return out
	}
	return v
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Call redacts a call's arguments in a copy.
func (r *Redactor) Call(c *Call, path string) (*Call, []string) {
	if c == nil || !r.active() {
		return c, nil
	}
	args, hits := r.Value(c.Arguments, path+"/arguments")
	m, _ := args.(map[string]any)
	return &Call{Tool: c.Tool, Arguments: m}, hits
}

// Raw redacts a model's raw output. Output that is JSON (as grammar-
// constrained output is) is redacted like arguments and re-encoded; other
// text that mentions a redacted name is replaced whole, since where its
// value lies cannot be known.
func (r *Redactor) Raw(raw string) (string, []string) { return r.rawAt(raw, "/raw_output") }

// rawAt is Raw for the raw output at path (a turn step's too).
func (r *Redactor) rawAt(raw, path string) (string, []string) {
	if !r.active() || raw == "" {
		return raw, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		red, hits := r.Value(v, path)
		if len(hits) == 0 {
			return raw, nil
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(red) == nil {
			return strings.TrimRight(buf.String(), "\n"), hits
		}
	}
	low := strings.ToLower(raw)
	for k := range r.keys {
		if strings.Contains(low, k) {
			return RedactedValue + " (raw output not JSON, mentions a redacted name)", []string{path}
		}
	}
	return raw, nil
}

// Record returns a redacted copy of rec: call, steps, turn steps (call and
// raw output), corrected call, model options and raw output. The paths replaced are added to Redacted.
func (r *Redactor) Record(rec Record) Record {
	if !r.active() {
		return rec
	}
	var hits []string
	add := func(h []string) { hits = append(hits, h...) }
	var h []string
	rec.Call, h = r.Call(rec.Call, "/call")
	add(h)
	if len(rec.Steps) > 0 {
		steps := make([]Call, len(rec.Steps))
		for i := range rec.Steps {
			c, h := r.Call(&rec.Steps[i], "/steps/"+itoa(i))
			steps[i] = *c
			add(h)
		}
		rec.Steps = steps
	}
	if len(rec.TurnSteps) > 0 {
		steps := make([]TurnStep, len(rec.TurnSteps))
		for i, st := range rec.TurnSteps {
			at := "/turn_steps/" + itoa(i)
			st.Call, h = r.Call(st.Call, at+"/call")
			add(h)
			st.RawOutput, h = r.rawAt(st.RawOutput, at+"/raw_output")
			add(h)
			steps[i] = st
		}
		rec.TurnSteps = steps
	}
	if rec.Feedback != nil && rec.Feedback.Corrected != nil {
		fb := *rec.Feedback
		fb.Corrected, h = r.Call(fb.Corrected, "/feedback/corrected")
		add(h)
		rec.Feedback = &fb
	}
	if rec.Model != nil && rec.Model.Options != nil {
		m := *rec.Model
		opts, h := r.Value(m.Options, "/model/options")
		m.Options, _ = opts.(map[string]any)
		add(h)
		rec.Model = &m
	}
	rec.RawOutput, h = r.Raw(rec.RawOutput)
	add(h)
	if len(hits) > 0 {
		rec.Redacted = append(append([]string(nil), rec.Redacted...), hits...)
	}
	return rec
}
