package grammar

import (
	"fmt"
	"sync"
)

// Formats are asserted (as a validator with format assertion on does) by
// regular languages that are subsets of what the checks of RFC 3339, RFC
// 3986, RFC 1123 etc. accept. Where the exact rule is not regular or too
// large (total hostname length), the language is narrowed (documented per
// format below) so that nothing invalid is ever produced.

const (
	fmtDate = `(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))` +
		`|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)`
	// no leap seconds (":60"); 1-9 fraction digits
	fmtTime     = `(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])`
	fmtDateTime = fmtDate + `[Tt]` + fmtTime
	fmtDurTime  = `T(?:[0-9]{1,9}H(?:[0-9]{1,9}M)?(?:[0-9]{1,9}S)?|[0-9]{1,9}M(?:[0-9]{1,9}S)?|[0-9]{1,9}S)`
	fmtDuration = `P(?:[0-9]{1,9}W|(?:[0-9]{1,9}Y(?:[0-9]{1,9}M)?(?:[0-9]{1,9}D)?|[0-9]{1,9}M(?:[0-9]{1,9}D)?|[0-9]{1,9}D)(?:` + fmtDurTime + `)?|` + fmtDurTime + `)`
	fmtUUID     = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`
	fmtOctet    = `(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	fmtIPv4     = fmtOctet + `(?:\.` + fmtOctet + `){3}`
	h16         = `[0-9a-fA-F]{1,4}`
	fmtIPv6     = `(?:(?:` + h16 + `:){7}` + h16 + `|(?:` + h16 + `:){1,7}:|(?:` + h16 + `:){1,6}:` + h16 +
		`|(?:` + h16 + `:){1,5}(?::` + h16 + `){1,2}|(?:` + h16 + `:){1,4}(?::` + h16 + `){1,3}|(?:` + h16 + `:){1,3}(?::` + h16 + `){1,4}` +
		`|(?:` + h16 + `:){1,2}(?::` + h16 + `){1,5}|` + h16 + `:(?::` + h16 + `){1,6}|:(?:(?::` + h16 + `){1,7}|:))`
	label63 = `[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?`
	label40 = `[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}[A-Za-z0-9])?`
	// at most 5 labels, total ≤ 253
	fmtHostname = `(?:` + label63 + `\.){0,2}(?:` + label40 + `\.){0,2}` + label40
	emailAtom   = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
	// local part ≤ 64 (enforced by intersection), domain ≤ 186
	emailLocal  = emailAtom + `(?:\.` + emailAtom + `)*`
	emailDomain = `(?:` + label63 + `\.)?(?:` + label40 + `\.){0,2}` + label40
	uriUnres    = `A-Za-z0-9\-._~`
	uriSub      = `!$&'()*+,;=`
	uriPct      = `%[0-9A-Fa-f]{2}`
	uriPchar    = `(?:[` + uriUnres + uriSub + `:@]|` + uriPct + `)`
	uriQuery    = `(?:\?(?:[` + uriUnres + uriSub + `:@/?]|` + uriPct + `)*)?(?:#(?:[` + uriUnres + uriSub + `:@/?]|` + uriPct + `)*)?`
	uriAuth     = `(?:(?:[` + uriUnres + uriSub + `:]|` + uriPct + `)*@)?[` + uriUnres + uriSub + `]*(?::[0-9]{0,5})?`
	fmtURI      = `[A-Za-z][A-Za-z0-9+.\-]*:(?://` + uriAuth + `(?:/` + uriPchar + `*)*|/?(?:` + uriPchar + `+(?:/` + uriPchar + `*)*)?)` + uriQuery
	// relative references: no ':' in the first segment
	uriNC      = `(?:[` + uriUnres + uriSub + `@]|` + uriPct + `)`
	fmtURIRef  = `(?:` + fmtURI + `|(?://` + uriAuth + `(?:/` + uriPchar + `*)*|/?(?:` + uriNC + `+(?:/` + uriPchar + `*)*)?)` + uriQuery + `)`
	fmtJSONPtr = `(?:/(?:[^~/]|~[01])*)*`
	fmtRelPtr  = `(?:0|[1-9][0-9]{0,8})(?:#|` + fmtJSONPtr + `)`
)

var formatRegex = map[string]string{
	"date":                  fmtDate,
	"time":                  fmtTime,
	"date-time":             fmtDateTime,
	"duration":              fmtDuration,
	"uuid":                  fmtUUID,
	"ipv4":                  fmtIPv4,
	"ipv6":                  fmtIPv6,
	"hostname":              fmtHostname,
	"email":                 "email",
	"uri":                   fmtURI,
	"iri":                   fmtURI,
	"uri-reference":         fmtURIRef,
	"iri-reference":         fmtURIRef,
	"json-pointer":          fmtJSONPtr,
	"relative-json-pointer": fmtRelPtr,
}

// unsupportedFormats are formats a validator checks that we cannot express.
var unsupportedFormats = map[string]bool{"uri-template": true, "semver": true, "period": true, "regex": true}

var formatCache sync.Map // name → *rdfa

// formatDFA returns the language of a format; ok false for formats that are
// ignored (unknown ones are annotations); err for known ones we cannot
// enforce.
func formatDFA(name string) (d *rdfa, ok bool, err error) {
	if v, hit := formatCache.Load(name); hit {
		return v.(*rdfa), true, nil
	}
	if unsupportedFormats[name] {
		return nil, false, fmt.Errorf("format %q cannot be enforced", name)
	}
	re, known := formatRegex[name]
	if !known {
		return nil, false, nil
	}
	if name == "email" {
		local := intersectDFA(anchoredDFA(emailLocal), lengthDFA(1, 64))
		n := &rnfa{}
		s1, e1 := local.toNFA(n)
		at := n.add()
		n.edge(e1, rset{{'@', '@'}}, at)
		s2, e2 := anchoredDFA(emailDomain).toNFA(n)
		n.epsTo(at, s2)
		d = n.determinize(s1, e2)
	} else {
		d = anchoredDFA(re)
	}
	d.shared = true
	formatCache.Store(name, d)
	return d, true, nil
}
