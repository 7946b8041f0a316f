package export

// formatPatterns are ECMA-262 patterns (anchored) whose languages are subsets
// of what a 2020-12 validator with format assertion accepts for each format.
// They stand in for the format in both exports: llama.cpp's converter knows
// only date, time, date-time and uuid, and its date accepts 2023-02-31.
var formatPatterns = map[string]string{
	"date":      datePat,
	"time":      timePat,
	"date-time": datePat + "T" + timePat,
	"uuid":      `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
	"ipv4":      `(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`,
	"ipv6":      `(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}`,
	"hostname":  hostPat,
	"email":     `[A-Za-z0-9_%+-]{1,32}(?:\.[A-Za-z0-9_%+-]{1,16})?@` + hostPat + `\.[a-z]{2,6}`,
	"uri":       `https?://` + hostPat + `(?:/[A-Za-z0-9._~-]{0,32}){0,8}`,
	"duration":  `P(?:\d{1,6}W|(?:\d{1,6}Y(?:\d{1,6}M)?(?:\d{1,6}D)?|\d{1,6}M(?:\d{1,6}D)?|\d{1,6}D)(?:` + durTime + `)?|` + durTime + `)`,
}

const (
	// Days checked against the month, 29 February only in leap years.
	datePat = `(?:\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|02-(?:0[1-9]|1\d|2[0-8]))` +
		`|(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)`
	timePat = `(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)`
	hostPat = `[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?){0,2}`
	durTime = `T(?:\d{1,6}H(?:\d{1,6}M)?(?:\d{1,6}S)?|\d{1,6}M(?:\d{1,6}S)?|\d{1,6}S)`
)

// assertedFormats are formats a validator may assert that we have no
// pattern for: dropping them is a loosening. Other format values are
// annotations everywhere.
var assertedFormats = map[string]bool{
	"regex": true, "iri": true, "uri-reference": true, "iri-reference": true, "uri-template": true,
	"json-pointer": true, "relative-json-pointer": true, "idn-email": true, "idn-hostname": true,
	"period": true, "semver": true,
}
