package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParseCapability reads the written form Kind(Arg), e.g. "ReadSpace(documents)",
// "Network(*)", or a bare "Kind" (no argument).
func ParseCapability(s string) (Capability, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if s == "" || strings.ContainsAny(s, ")") {
			return Capability{}, fmt.Errorf("capability %q: want Kind(arg)", s)
		}
		return Capability{Kind: s}, nil
	}
	if !strings.HasSuffix(s, ")") || open == 0 {
		return Capability{}, fmt.Errorf("capability %q: want Kind(arg)", s)
	}
	return Capability{Kind: strings.TrimSpace(s[:open]), Arg: strings.TrimSpace(s[open+1 : len(s)-1])}, nil
}

// Covers reports whether a held capability satisfies a required one.
//
// Matching is deliberately small, so that a policy file reads the way it acts:
//   - kinds must be equal (case-sensitive: they are identifiers);
//   - a held argument "*" covers every argument of that kind, so Network(*)
//     reaches any host;
//   - a held argument "*.example.org" covers hosts strictly under example.org
//     (not example.org itself), the way TLS wildcards do;
//   - otherwise arguments must be equal; for Network they compare
//     case-insensitively, because host names do.
//
// A *required* "*" (a tool that needs arbitrary network access) is covered
// only by a held "*": holding one host never grants all of them.
func (held Capability) Covers(req Capability) bool {
	if held.Kind != req.Kind {
		return false
	}
	if held.Arg == "*" {
		return true
	}
	if req.Arg == "*" {
		return false
	}
	eq := func(a, b string) bool { return a == b }
	if held.Kind == "Network" {
		eq = strings.EqualFold
	}
	if suffix, ok := strings.CutPrefix(held.Arg, "*."); ok {
		n := len(req.Arg) - len(suffix)
		return n > 1 && req.Arg[n-1] == '.' && eq(req.Arg[n:], suffix)
	}
	return eq(held.Arg, req.Arg)
}

// UnmarshalJSON accepts both the object form {"kind":..,"arg":..} that
// Capability marshals to and the written form "Kind(arg)" people type.
func (c *Capability) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p, err := ParseCapability(s)
		if err != nil {
			return err
		}
		*c = p
		return nil
	}
	type plain Capability // no methods: avoids recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = Capability(p)
	return nil
}

// ParamRef reports whether the capability's argument names a parameter of
// the call ("ReadSpace($space)" → "space"): the capability a call needs
// then depends on its arguments, and is bound per call (Bind).
func (c Capability) ParamRef() (string, bool) {
	name, ok := strings.CutPrefix(c.Arg, "$")
	return name, ok && name != ""
}

// Bind resolves a "$param" argument from the call's decoded params (a
// top-level string). A parameter that is absent or not a string binds to
// "" — covered only by a held "*" — and schema validation rejects the call
// anyway.
func (c Capability) Bind(params any) Capability {
	name, ok := c.ParamRef()
	if !ok {
		return c
	}
	c.Arg = ""
	if m, ok := params.(map[string]any); ok {
		if s, ok := m[name].(string); ok {
			c.Arg = s
		}
	}
	return c
}
