package understand

import (
	"strings"
)

// reDigit: a number written with digits.
var reDigit = MustPattern(`\d`)

// quantityWords name an amount without a number: a span of time taken as
// one unit ("for the next week" is 7 days, "next month" is 1), or a count
// in words the number reader does not turn into digits.
var quantityWords = map[string]bool{
	"once": true, "twice": true, "thrice": true, "double": true, "triple": true,
	"half": true, "quarter": true, "pair": true, "couple": true, "dozen": true,
	"single": true, "first": true, "second": true, "third": true, "last": true,
	"minute": true, "hour": true, "day": true, "week": true, "weekend": true,
	"month": true, "year": true, "decade": true, "century": true,
	"today": true, "tomorrow": true, "yesterday": true, "daily": true,
	"weekly": true, "monthly": true, "yearly": true, "annual": true, "annually": true,
}

// StatesQuantity reports whether a request gives any number a tool could
// take: digits, a number in words ("twenty five"), or a word that stands
// for an amount ("twice", "next week"). A request without one cannot fill
// a required numeric parameter from its own words.
func StatesQuantity(text string) bool {
	if reDigit.MatchString(text) {
		return true
	}
	if reDigit.MatchString(NumbersInWords(text)) {
		return true
	}
	for _, w := range lowerWords(text) {
		if quantityWords[w] || quantityWords[strings.TrimSuffix(w, "s")] {
			return true
		}
	}
	return false
}

// timeWords say when without a number.
var timeWords = map[string]bool{
	"today": true, "tomorrow": true, "yesterday": true, "tonight": true, "now": true,
	"current": true, "currently": true, "last": true, "next": true, "this": true,
	"latest": true, "recent": true, "upcoming": true, "past": true, "previous": true,
	"spring": true, "summer": true, "autumn": true, "fall": true, "winter": true,
	"january": true, "february": true, "march": true, "april": true, "may": true,
	"june": true, "july": true, "august": true, "september": true, "october": true,
	"november": true, "december": true, "monday": true, "tuesday": true,
	"wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true,
}

// StatesTime reports whether a request says when: a number (a year, a
// date), a month, a season, a weekday, or a word relative to now ("last",
// "next", "today").
func StatesTime(text string) bool {
	if reDigit.MatchString(text) {
		return true
	}
	for _, w := range lowerWords(text) {
		if timeWords[w] {
			return true
		}
	}
	return false
}

// reWord: a word as written, with its capitals.
var reWord = MustPattern(`[A-Za-z][A-Za-z'-]*`)

// NamesPlace reports whether a request holds a proper name, the only way a
// place is named in words ("in Boston", "near Los Angeles, CA"): a word
// with a capital that does not begin a sentence and is neither "I" nor a
// format's name ("as JSON").
func NamesPlace(text string) bool {
	ws := reWord.FindAllStringIndex(text, -1)
	for _, loc := range ws {
		w := text[loc[0]:loc[1]]
		if w == "I" || w[0] < 'A' || w[0] > 'Z' || FormatWord(w) {
			continue
		}
		before := strings.TrimRight(text[:loc[0]], " \t\"'(")
		if before == "" || strings.ContainsAny(before[len(before)-1:], ".?!\n") {
			continue // a sentence's first word
		}
		return true
	}
	return false
}

func lowerWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z')
	})
}
