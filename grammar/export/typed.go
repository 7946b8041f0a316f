package export

import (
	"math/big"
	"strconv"

	"github.com/airs-dev/airs/internal/jsonptr"
)

// typed normalizes s restricted to JSON type t.
func (n *normalizer) typed(s *value, t, ptr string) *value {
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
		return newObj("type", t)
	}
	return nil
}

func intKW(s *value, kw string) (int, bool) {
	v := s.get(kw)
	r, ok := v.rat()
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

func (n *normalizer) object(s *value, ptr string) *value {
	for _, kw := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		if v := s.get(kw); v != nil && v.kind == 'o' && len(v.obj) > 0 {
			n.loosen(ptr, kw, "%s is not expressible in the export; dropped", kw)
		}
	}
	props := s.get("properties")
	pp := s.get("patternProperties")
	ap := s.get("additionalProperties")
	required := map[string]bool{}
	var reqOrder []string
	if r := s.get("required"); r != nil && r.kind == 'a' {
		for _, e := range r.arr {
			if e.kind == 's' && !required[e.str] {
				required[e.str] = true
				reqOrder = append(reqOrder, e.str)
			}
		}
	}
	// Which undeclared properties may appear: none when patternProperties
	// or propertyNames constrain keys (a narrowing), else what
	// additionalProperties says (absent = any value).
	extrasAllowed := true
	var extraSchema *value
	switch {
	case ap == nil:
	case ap.kind == 'b':
		extrasAllowed = ap.b
	default:
		extraSchema = ap
	}
	if u := s.get("unevaluatedProperties"); u != nil && ap == nil {
		if u.kind == 'b' && !u.b {
			extrasAllowed = false
		} else {
			extraSchema = u
		}
	}
	if (pp != nil && len(pp.obj) > 0) || s.has("propertyNames") || n.opts.Strict {
		extrasAllowed = false
	}
	if pn := s.get("propertyNames"); pn != nil && props != nil && len(props.obj) > 0 && !(pn.kind == 'b' && pn.b) {
		n.loosen(ptr, "propertyNames", "declared property names are not checked against propertyNames")
	}
	type prop struct {
		name string
		sch  *value
		req  bool
	}
	var ps []prop
	declared := map[string]bool{}
	addProp := func(name string, sch *value, pptr string) bool {
		// patternProperties also apply to declared names
		if pp != nil {
			for _, m := range pp.obj {
				if re, err := compileECMA(m.key); err == nil && re.MatchString(name) {
					sch = newObj("allOf", []*value{sch, m.val})
				} else if err != nil {
					n.loosen(ptr+"/patternProperties", m.key, "pattern not understood (%v); not applied to %q", err, name)
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
	if props != nil && props.kind == 'o' {
		for _, m := range props.obj {
			if declared[m.key] {
				continue
			}
			if !addProp(m.key, m.val, ptr+"/properties/"+jsonptr.Escape(m.key)) {
				return nil
			}
		}
	}
	for _, r := range reqOrder {
		if declared[r] {
			continue
		}
		var sch *value
		switch {
		case matchesPattern(s, r):
			sch = newObj()
		case ap == nil || (ap.kind == 'b' && ap.b):
			sch = newObj()
		case ap.kind == 'b':
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
	pm := newObj()
	var req []string
	for _, p := range ps {
		pm.set(p.name, p.sch)
		if p.req {
			req = append(req, p.name)
		}
	}
	o := newObj("type", "object", "properties", pm)
	if len(req) > 0 {
		o.set("required", toValue(req))
	}
	switch {
	case !extrasAllowed:
		o.set("additionalProperties", toValue(false))
	case extraSchema != nil:
		v := n.norm(extraSchema, ptr+"/additionalProperties")
		if v == nil {
			o.set("additionalProperties", toValue(false))
		} else {
			o.set("additionalProperties", v)
		}
	default:
		o.set("additionalProperties", toValue(true))
	}
	return o
}

func (n *normalizer) array(s *value, ptr string) *value {
	var prefix []*value
	var rest *value // nil: any
	restFalse := false
	if p := s.get("prefixItems"); p != nil && p.kind == 'a' {
		prefix = p.arr
		rest = s.get("items")
	} else if it := s.get("items"); it != nil && it.kind == 'a' {
		prefix = it.arr
		rest = s.get("additionalItems")
	} else {
		rest = s.get("items")
	}
	if rest == nil {
		if u := s.get("unevaluatedItems"); u != nil {
			rest = u
		}
	}
	if rest != nil && rest.kind == 'b' && !rest.b {
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
	if u := s.get("uniqueItems"); u != nil && u.kind == 'b' && u.b && !(hasHi && hi <= 1) {
		n.loosen(ptr, "uniqueItems", "uniqueItems is not expressible in the export; dropped")
	}
	if c := s.get("contains"); c != nil && !(c.kind == 'b' && c.b) {
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
		var items []*value
		for i := range l {
			var sch *value
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
		return newObj("type", "array", "prefixItems", toValue(items), "minItems", l, "maxItems", l)
	}
	if restFalse {
		if lo > 0 {
			return nil
		}
		return newObj("type", "array", "items", n.anySchema(), "maxItems", 0)
	}
	item := n.norm(rest, ptr+"/items")
	if item == nil {
		if lo > 0 {
			return nil
		}
		return newObj("type", "array", "items", n.anySchema(), "maxItems", 0)
	}
	return n.arraySchema(item, lo, hi)
}

func (n *normalizer) str(s *value, ptr string) *value {
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
	if p := s.get("pattern"); p != nil && p.kind == 's' {
		pat, patKW = p.str, "pattern"
	}
	if f := s.get("format"); f != nil && f.kind == 's' {
		fp, known := formatPatterns[f.str]
		switch {
		case known && pat == "":
			pat, patKW = fp, "format"
		case known || assertedFormats[f.str]:
			n.loosen(ptr, "format", "format %q not enforced", f.str)
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
			o := newObj("type", "string", "pattern", text)
			if f := s.get("format"); f != nil && patKW == "format" {
				o.set("format", f)
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
func (n *normalizer) intBounds(s *value) (lo, hi *big.Int) {
	ceil := func(r *big.Rat) *big.Int {
		q := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean = floor for a positive denominator
		if !r.IsInt() {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	floor := func(r *big.Rat) *big.Int { return new(big.Int).Div(r.Num(), r.Denom()) }
	exMinBool := s.get("exclusiveMinimum") != nil && s.get("exclusiveMinimum").kind == 'b' && s.get("exclusiveMinimum").b
	exMaxBool := s.get("exclusiveMaximum") != nil && s.get("exclusiveMaximum").kind == 'b' && s.get("exclusiveMaximum").b
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
	if r, ok := s.get("minimum").rat(); ok {
		if exMinBool {
			setLo(new(big.Int).Add(floor(r), big.NewInt(1)))
		} else {
			setLo(ceil(r))
		}
	}
	if r, ok := s.get("exclusiveMinimum").rat(); ok {
		setLo(new(big.Int).Add(floor(r), big.NewInt(1)))
	}
	if r, ok := s.get("maximum").rat(); ok {
		if exMaxBool {
			setHi(new(big.Int).Sub(ceil(r), big.NewInt(1)))
		} else {
			setHi(floor(r))
		}
	}
	if r, ok := s.get("exclusiveMaximum").rat(); ok {
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

func (n *normalizer) integer(s *value, ptr string, fromNumber bool) *value {
	lo, hi := n.intBounds(s)
	if lo != nil && hi != nil && lo.Cmp(hi) > 0 {
		return nil
	}
	if m, ok := s.get("multipleOf").rat(); ok && m.Sign() > 0 {
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
					var vals []*value
					for x := first; x.Cmp(hi) <= 0; x = new(big.Int).Add(x, m.Num()) {
						vals = append(vals, toValue(new(big.Int).Set(x)))
					}
					switch len(vals) {
					case 0:
						return nil
					case 1:
						return newObj("const", vals[0])
					}
					return newObj("enum", toValue(vals))
				}
			}
			n.loosen(ptr, "multipleOf", "multipleOf %s not enforced", s.get("multipleOf").str)
		}
	}
	o := newObj("type", "integer")
	if lo != nil {
		if lo.Cmp(maxExportInt) > 0 || lo.Cmp(minExportInt) < 0 {
			n.loosen(ptr, "minimum", "bound %s outside the exported integer range", lo)
		} else {
			o.set("minimum", toValue(lo))
		}
	}
	if hi != nil {
		if hi.Cmp(maxExportInt) > 0 || hi.Cmp(minExportInt) < 0 {
			n.loosen(ptr, "maximum", "bound %s outside the exported integer range", hi)
		} else {
			o.set("maximum", toValue(hi))
		}
	}
	return o
}

func (n *normalizer) number(s *value, ptr string) *value {
	if m, ok := s.get("multipleOf").rat(); ok && m.Sign() > 0 && m.IsInt() {
		// multiples of an integer are integers: generate them as integers
		return n.integer(s, ptr, true)
	}
	if m := s.get("multipleOf"); m != nil {
		n.loosen(ptr, "multipleOf", "multipleOf %s not enforced on numbers", m.str)
	}
	lo, _ := s.get("minimum").rat()
	hi, _ := s.get("maximum").rat()
	if lo != nil && hi != nil && lo.Cmp(hi) == 0 && !s.has("exclusiveMinimum") && !s.has("exclusiveMaximum") {
		return newObj("const", &value{kind: 'n', str: s.get("minimum").str})
	}
	for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if v := s.get(kw); v != nil && v.kind == 'n' {
			n.loosen(ptr, kw, "%s on a number is not enforced by llama.cpp's converter", kw)
		}
	}
	return newObj("type", "number")
}
