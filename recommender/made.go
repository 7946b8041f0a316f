package recommender

import (
	"encoding/json"
	"reflect"
	"slices"
	"time"
)

// madeCall is a call the caller made: its tool, its arguments and when.
type madeCall struct {
	key  string // callKey
	tool string
	args map[string]any // nil when they are no JSON object
	at   time.Time
}

// maxMade bounds the calls remembered per caller for sameAsMade: more
// than maxRecent, since one plan over a folder makes a call per file and
// its first step (the listing) must still be known after them.
const maxMade = 64

// addMade records a call, once: Done and the pipeline's event tell of the
// same call, and a call made again counts from its latest time.
func addMade(made []madeCall, mc madeCall) []madeCall {
	made = slices.DeleteFunc(made, func(x madeCall) bool { return x.key == mc.key })
	return appendBounded(made, mc, maxMade)
}

func newMadeCall(tool string, params json.RawMessage, at, now time.Time) madeCall {
	if at.IsZero() {
		at = now
	}
	mc := madeCall{key: callKey(tool, params), tool: tool, at: at}
	if len(params) <= maxObservedParams {
		_ = json.Unmarshal(params, &mc.args)
	}
	return mc
}

// sameAsMade reports whether calling tool with params would repeat a call
// the caller made lately with nothing changed since: the same tool, every
// argument the two calls share of equal value (one may say more: list the
// space, or list its PDFs, right after listing its PDFs shows nothing
// new), and no file created, written or removed after it. A file only
// opened changes nothing; any other file event means the same call may
// now answer differently, so it may be suggested again.
func sameAsMade(cs *callerState, tool string, params json.RawMessage) bool {
	for _, mc := range cs.made {
		if !changedSince(cs.files, mc.at) && mc.repeats(tool, params) {
			return true
		}
	}
	return false
}

// repeats reports whether calling tool with params is mc again: the same
// tool, and every argument both give of equal value.
func (mc madeCall) repeats(tool string, params json.RawMessage) bool {
	var args map[string]any
	if mc.tool != tool || mc.args == nil || json.Unmarshal(params, &args) != nil {
		return false
	}
	for k, v := range args {
		if w, ok := mc.args[k]; ok && !reflect.DeepEqual(v, w) {
			return false
		}
	}
	return true
}

// changedSince reports whether a file was created, written or removed
// after t (opening one changes nothing).
func changedSince(files []FileEvent, t time.Time) bool {
	for _, f := range files {
		if f.Op != "open" && f.At.After(t) {
			return true
		}
	}
	return false
}
