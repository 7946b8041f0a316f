package export

import (
	"math/big"
	"strconv"

	"github.com/airs-dev/airs/internal/jsonptr"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// typed normalizes s restricted to JSON type t.
func (n *normalizer) typed(s *jsonvalue.Value, t, ptr string) *jsonvalue.Value {
	switch t {
	case "object":
		return n.object(s, ptr)
	case "array":
		return n.array(s, ptr)
	case "string":
		return n.str(s, ptr)
	case "integer":
		return n.integer(s, ptr, false)
	case "number":
		return n.number(s, ptr)
	case "boolean", "null":
		return jsonvalue.NewObject("type", t)
	}
	return nil
}

func intKW(s *jsonvalue.Value, kw string) (int, bool) {
	v := s.Get(kw)
	r, ok := rat(v)
	if !ok {
		return 0, false
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		f, _ := r.Float64()
		if f > 1e9 {
			return 1 << 30, true
		}
		return int(f), true
	}
	return int(r.Num().Int64()), true
}

func (n *normalizer) object(s *jsonvalue.Value, ptr string) *jsonvalue.Value {
	for _, kw := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		if v := s.Get(kw); v != nil && v.Kind == jsonvalue.Object && len(v.Keys) > 0 {
			n.loosen(ptr, kw, "%s is not expressible in the export; dropped", kw)
		}
	}
	props := s.Get("properties")
	pp := s.Get("patternProperties")
	ap := s.Get("additionalProperties")
	required := map[string]bool{}
	var reqOrder []string
	if r := s.Get("required"); r != nil && r.Kind == jsonvalue.Array {
		for _, e := range r.Vals {
			if e.Kind == jsonvalue.String && !required[e.Str] {
				required[e.Str] = true
				reqOrder = append(reqOrder, e.Str)
			}
		}
	}
	// Which undeclared properties may appear: none when patternProperties
	// or propertyNames constrain keys (a narrowing), else what
	// additionalProperties says (absent = any value).
	extrasAllowed := true
	var extraSchema *jsonvalue.Value
	switch {
	case ap == nil:
	case ap.Kind == jsonvalue.Bool:
		extrasAllowed = ap.Bool
	default:
		extraSchema = ap
	}
	if u := s.Get("unevaluatedProperties"); u != nil && ap == nil {
		if u.Kind == jsonvalue.Bool && !u.Bool {
			extrasAllowed = false
		} else {
			extraSchema = u
		}
	}
	if (pp != nil && len(pp.Keys) > 0) || s.Has("propertyNames") || n.opts.Strict {
		extrasAllowed = false
	}
	if pn := s.Get("propertyNames"); pn != nil && props != nil && len(props.Keys) > 0 && !(pn.Kind == jsonvalue.Bool && pn.Bool) {
		n.loosen(ptr, "propertyNames", "declared property names are not checked against propertyNames")
	}
	type prop struct {
		name string
		sch  *jsonvalue.Value
		req  bool
	}
	var ps []prop
	declared := map[string]bool{}
	addProp := func(name string, sch *jsonvalue.Value, pptr string) bool {
		// patternProperties also apply to declared names
		if pp != nil {
			for pat, sub := range pp.Members() {
				if re, err := compileECMA(pat); err == nil && re.MatchString(name) {
					sch = jsonvalue.NewObject("allOf", []*jsonvalue.Value{sch, sub})
				} else if err != nil {
					n.loosen(ptr+"/patternProperties", pat, "pattern not understood (%v); not applied to %q", err, name)
				}
			}
		}
		v := n.norm(sch, pptr)
		if v == nil {
			return !required[name]
		}
		ps = append(ps, prop{name, v, required[name]})
		declared[name] = true
		return true
	}
	if props != nil && props.Kind == jsonvalue.Object {
		for k, v := range props.Members() {
			if declared[k] {
				continue
			}
			if !addProp(k, v, ptr+"/properties/"+jsonptr.Escape(k)) {
				return nil
			}
		}
	}
	for _, r := range reqOrder {
		if declared[r] {
			continue
		}
		var sch *jsonvalue.Value
		switch {
		case matchesPattern(s, r):
			sch = jsonvalue.NewObject()
		case ap == nil || (ap.Kind == jsonvalue.Bool && ap.Bool):
			sch = jsonvalue.NewObject()
		case ap.Kind == jsonvalue.Bool:
			return nil // required but forbidden
		default:
			sch = ap
		}
		if !addProp(r, sch, ptr+"/required") {
			return nil
		}
	}
	// min/maxProperties: make optional properties required (in order) to
	// reach minProperties; drop optional ones beyond maxProperties.
	nreq := 0
	for _, p := range ps {
		if p.req {
			nreq++
		}
	}
	if lo, ok := intKW(s, "minProperties"); ok && lo > nreq {
		for i := range ps {
			if nreq >= lo {
				break
			}
			if !ps[i].req {
				ps[i].req = true
				nreq++
			}
		}
		if nreq < lo {
			n.loosen(ptr, "minProperties", "fewer declared properties than minProperties %d", lo)
		}
	}
	if hi, ok := intKW(s, "maxProperties"); ok {
		extrasAllowed = false
		if nreq > hi {
			return nil
		}
		room := hi - nreq
		var kept []prop
		for _, p := range ps {
			if p.req {
				kept = append(kept, p)
			} else if room > 0 {
				kept = append(kept, p)
				room--
			}
		}
		ps = kept
	}
	pm := jsonvalue.NewObject()
	var req []string
	for _, p := range ps {
		pm.Set(p.name, p.sch)
		if p.req {
			req = append(req, p.name)
		}
	}
	o := jsonvalue.NewObject("type", "object", "properties", pm)
	if len(req) > 0 {
		o.Set("required", jsonvalue.From(req))
	}
	switch {
	case !extrasAllowed:
		o.Set("additionalProperties", jsonvalue.From(false))
	case extraSchema != nil:
		v := n.norm(extraSchema, ptr+"/additionalProperties")
		if v == nil {
			o.Set("additionalProperties", jsonvalue.From(false))
		} else {
			o.Set("additionalProperties", v)
		}
	default:
		o.Set("additionalProperties", jsonvalue.From(true))
	}
	return o
}

func (n *normalizer) array(s *jsonvalue.Value, ptr string) *jsonvalue.Value {
	var prefix []*jsonvalue.Value
	var rest *jsonvalue.Value // nil: any
	restFalse := false
	if p := s.Get("prefixItems"); p != nil && p.Kind == jsonvalue.Array {
		prefix = p.Vals
		rest = s.Get("items")
	} else if it := s.Get("items"); it != nil && it.Kind == jsonvalue.Array {
		prefix = it.Vals
		rest = s.Get("additionalItems")
	} else {
		rest = s.Get("items")
	}
	if rest == nil {
		if u := s.Get("unevaluatedItems"); u != nil {
			rest = u
		}
	}
	if rest != nil && rest.Kind == jsonvalue.Bool && !rest.Bool {
		restFalse = true
	}
	lo, _ := intKW(s, "minItems")
	hi, hasHi := intKW(s, "maxItems")
	if !hasHi {
		hi = -1
	}
	if hasHi && hi < lo {
		return nil
	}
	if u := s.Get("uniqueItems"); u != nil && u.Kind == jsonvalue.Bool && u.Bool && !(hasHi && hi <= 1) {
		n.loosen(ptr, "uniqueItems", "uniqueItems is not expressible in the export; dropped")
	}
	if c := s.Get("contains"); c != nil && !(c.Kind == jsonvalue.Bool && c.Bool) {
		if mc, ok := intKW(s, "minContains"); !ok || mc > 0 {
			n.loosen(ptr, "contains", "contains is not expressible in the export; dropped")
		}
	}
	if lo > maxRepetition {
		n.loosen(ptr, "minItems", "minItems %d over llama.cpp's repetition limit; lowered to %d", lo, maxRepetition)
		lo = maxRepetition
	}
	if hi > maxRepetition {
		hi = maxRepetition
	}
	if len(prefix) > 0 {
		// A fixed-length tuple: as long as the prefix, stretched to minItems
		// with the rest schema, cut to maxItems.
		l := max(len(prefix), lo)
		if restFalse && l > len(prefix) {
			return nil
		}
		if hi >= 0 && l > hi {
			l = hi
		}
		if l < lo {
			return nil
		}
		var items []*jsonvalue.Value
		for i := range l {
			var sch *jsonvalue.Value
			iptr := ptr + "/prefixItems/" + strconv.Itoa(i)
			if i < len(prefix) {
				sch = prefix[i]
			} else {
				sch, iptr = rest, ptr+"/items"
			}
			v := n.norm(sch, iptr)
			if v == nil {
				return nil
			}
			items = append(items, v)
		}
		return jsonvalue.NewObject("type", "array", "prefixItems", jsonvalue.From(items), "minItems", l, "maxItems", l)
	}
	if restFalse {
		if lo > 0 {
			return nil
		}
		return jsonvalue.NewObject("type", "array", "items", n.anySchema(), "maxItems", 0)
	}
	item := n.norm(rest, ptr+"/items")
	if item == nil {
		if lo > 0 {
			return nil
		}
		return jsonvalue.NewObject("type", "array", "items", n.anySchema(), "maxItems", 0)
	}
	return n.arraySchema(item, lo, hi)
}

func (n *normalizer) str(s *jsonvalue.Value, ptr string) *jsonvalue.Value {
	lo, _ := intKW(s, "minLength")
	hi, hasHi := intKW(s, "maxLength")
	if !hasHi {
		hi = -1
	}
	if hasHi && hi < lo {
		return nil
	}
	pat := ""
	patKW := ""
	if p := s.Get("pattern"); p != nil && p.Kind == jsonvalue.String {
		pat, patKW = p.Str, "pattern"
	}
	if f := s.Get("format"); f != nil && f.Kind == jsonvalue.String {
		fp, known := formatPatterns[f.Str]
		switch {
		case known && pat == "":
			pat, patKW = fp, "format"
		case known || assertedFormats[f.Str]:
			n.loosen(ptr, "format", "format %q not enforced", f.Str)
		}
	}
	if pat != "" {
		r, err := parsePattern(pat)
		if err == nil && r != nil {
			err = checkRepeats(r)
		}
		if err != nil {
			n.loosen(ptr, patKW, "pattern %q: %v; dropped", pat, err)
		} else if r == nil {
			return nil
		} else if safe := safeOnly(r); safe == nil && !n.forGBNF {
			n.loosen(ptr, patKW, "pattern %q needs characters JSON escapes; dropped", pat)
		} else {
			text := pat
			if !n.forGBNF {
				r, text = safe, regexText(safe)
			}
			plo, phi := lengthRange(r)
			needLo, needHi := lo > plo, hasHi && (phi < 0 || phi > hi)
			if (needLo || needHi) && !n.forGBNF {
				// the converter ignores length bounds beside a pattern:
				// fold them into it where the pattern's shape allows
				if r2, ok := foldLength(r, lo, hi); ok {
					if r2 == nil {
						return nil
					}
					if checkRepeats(r2) == nil {
						text, needLo, needHi = regexText(r2), false, false
					}
				}
			}
			if needLo {
				n.loosen(ptr, "minLength", "minLength beside a pattern is not enforced")
			}
			if needHi {
				n.loosen(ptr, "maxLength", "maxLength beside a pattern is not enforced")
			}
			o := jsonvalue.NewObject("type", "string", "pattern", text)
			if f := s.Get("format"); f != nil && patKW == "format" {
				o.Set("format", f)
			}
			return o
		}
	}
	if lo > maxRepetition {
		n.loosen(ptr, "minLength", "minLength %d over llama.cpp's repetition limit; lowered to %d", lo, maxRepetition)
		lo = maxRepetition
	}
	if hi > maxRepetition {
		hi = maxRepetition
	}
	return n.stringSchema(lo, hi)
}

// integer bounds: the tightest of minimum/exclusiveMinimum (draft-4
// boolean forms included), rounded inwards to integers.
func (n *normalizer) intBounds(s *jsonvalue.Value) (lo, hi *big.Int) {
	ceil := func(r *big.Rat) *big.Int {
		q := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean = floor for a positive denominator
		if !r.IsInt() {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	floor := func(r *big.Rat) *big.Int { return new(big.Int).Div(r.Num(), r.Denom()) }
	exMinBool := s.Get("exclusiveMinimum") != nil && s.Get("exclusiveMinimum").Kind == jsonvalue.Bool && s.Get("exclusiveMinimum").Bool
	exMaxBool := s.Get("exclusiveMaximum") != nil && s.Get("exclusiveMaximum").Kind == jsonvalue.Bool && s.Get("exclusiveMaximum").Bool
	setLo := func(x *big.Int) {
		if lo == nil || x.Cmp(lo) > 0 {
			lo = x
		}
	}
	setHi := func(x *big.Int) {
		if hi == nil || x.Cmp(hi) < 0 {
			hi = x
		}
	}
	if r, ok := rat(s.Get("minimum")); ok {
		if exMinBool {
			setLo(new(big.Int).Add(floor(r), big.NewInt(1)))
		} else {
			setLo(ceil(r))
		}
	}
	if r, ok := rat(s.Get("exclusiveMinimum")); ok {
		setLo(new(big.Int).Add(floor(r), big.NewInt(1)))
	}
	if r, ok := rat(s.Get("maximum")); ok {
		if exMaxBool {
			setHi(new(big.Int).Sub(ceil(r), big.NewInt(1)))
		} else {
			setHi(floor(r))
		}
	}
	if r, ok := rat(s.Get("exclusiveMaximum")); ok {
		setHi(new(big.Int).Sub(ceil(r), big.NewInt(1)))
	}
	return lo, hi
}

// int64 bounds llama.cpp reads with get<int64_t>; its integers have at most
// 16 digits.
var (
	maxExportInt = big.NewInt(999_999_999_999_999)
	minExportInt = big.NewInt(-999_999_999_999_999)
)

func (n *normalizer) integer(s *jsonvalue.Value, ptr string, fromNumber bool) *jsonvalue.Value {
	lo, hi := n.intBounds(s)
	if lo != nil && hi != nil && lo.Cmp(hi) > 0 {
		return nil
	}
	if m, ok := rat(s.Get("multipleOf")); ok && m.Sign() > 0 {
		// Integers are multiples of m iff 1/m is an integer... more simply:
		// every integer is a multiple of m when m divides 1.
		inv := new(big.Rat).Inv(m)
		if !inv.IsInt() {
			if m.IsInt() && lo != nil && hi != nil {
				span := new(big.Int).Sub(hi, lo)
				cnt := new(big.Int).Div(span, m.Num())
				if cnt.Cmp(big.NewInt(256)) <= 0 {
					// enumerate the multiples in [lo, hi]
					first := new(big.Int).Set(lo)
					mod := new(big.Int).Mod(first, m.Num())
					if mod.Sign() != 0 {
						first.Add(first, new(big.Int).Sub(m.Num(), mod))
					}
					var vals []*jsonvalue.Value
					for x := first; x.Cmp(hi) <= 0; x = new(big.Int).Add(x, m.Num()) {
						vals = append(vals, jsonvalue.From(new(big.Int).Set(x)))
					}
					switch len(vals) {
					case 0:
						return nil
					case 1:
						return jsonvalue.NewObject("const", vals[0])
					}
					return jsonvalue.NewObject("enum", jsonvalue.From(vals))
				}
			}
			n.loosen(ptr, "multipleOf", "multipleOf %s not enforced", s.Get("multipleOf").Str)
		}
	}
	o := jsonvalue.NewObject("type", "integer")
	if lo != nil {
		if lo.Cmp(maxExportInt) > 0 || lo.Cmp(minExportInt) < 0 {
			n.loosen(ptr, "minimum", "bound %s outside the exported integer range", lo)
		} else {
			o.Set("minimum", jsonvalue.From(lo))
		}
	}
	if hi != nil {
		if hi.Cmp(maxExportInt) > 0 || hi.Cmp(minExportInt) < 0 {
			n.loosen(ptr, "maximum", "bound %s outside the exported integer range", hi)
		} else {
			o.Set("maximum", jsonvalue.From(hi))
		}
	}
	return o
}

func (n *normalizer) number(s *jsonvalue.Value, ptr string) *jsonvalue.Value {
	if m, ok := rat(s.Get("multipleOf")); ok && m.Sign() > 0 && m.IsInt() {
		// multiples of an integer are integers: generate them as integers
		return n.integer(s, ptr, true)
	}
	if m := s.Get("multipleOf"); m != nil {
		n.loosen(ptr, "multipleOf", "multipleOf %s not enforced on numbers", m.Str)
	}
	lo, _ := rat(s.Get("minimum"))
	hi, _ := rat(s.Get("maximum"))
	if lo != nil && hi != nil && lo.Cmp(hi) == 0 && !s.Has("exclusiveMinimum") && !s.Has("exclusiveMaximum") {
		return jsonvalue.NewObject("const", &jsonvalue.Value{Kind: jsonvalue.Number, Str: s.Get("minimum").Str})
	}
	for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if v := s.Get(kw); v != nil && v.Kind == jsonvalue.Number {
			n.loosen(ptr, kw, "%s on a number is not enforced by llama.cpp's converter", kw)
		}
	}
	return jsonvalue.NewObject("type", "number")
}
