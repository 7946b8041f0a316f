package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Record is one audited call. Seq and Prev are assigned by the Log (and
// Chain by a log kept as several chains, store/pg).
type Record struct {
	Seq uint64 `json:"seq"`
	// Chain is the chain the record was linked into in a log kept as
	// several chains (store/pg: one per process, AppendChainLine); 0, and
	// absent from the line, in a log of one chain (a file).
	Chain    uint64    `json:"chain,omitempty"`
	Prev     string    `json:"prev"` // hex SHA-256 of the previous line of its chain; Genesis for the first
	Time     time.Time `json:"time"`
	CallID   string    `json:"call_id"`
	Caller   string    `json:"caller"`
	Provider string    `json:"provider,omitempty"`
	Tool     string    `json:"tool"`
	Version  string    `json:"version,omitempty"`
	// MigratedFrom is the version the caller pinned when its params were
	// migrated to Version, and Migration the migration tool (name@version).
	MigratedFrom string `json:"migrated_from,omitempty"`
	Migration    string `json:"migration,omitempty"`
	ParamsSHA256 string `json:"params_sha256"`
	// ParamsBytes is the params' size as sent (the anomaly model's
	// param_size_bytes feature; `airs guard train` reads it back). Absent
	// in logs written before it existed, and for a call with no params.
	ParamsBytes int    `json:"params_bytes,omitempty"`
	Outcome     string `json:"outcome"`
	Error       string `json:"error,omitempty"` // error kind, when the call failed
	LatencyNs   int64  `json:"latency_ns"`
	// Intent is the intent gate's decision (pipeline.IntentRequired,
	// IntentApproved, IntentAlways, IntentDenied, IntentQueued), Review the
	// confirmation or review it concerns, Reviewer who decided it.
	Intent   string `json:"intent,omitempty"`
	Review   string `json:"review,omitempty"`
	Reviewer string `json:"reviewer,omitempty"`
	// AnomalyScore is the call's anomaly score in [0, 1] (3 decimals) and
	// AnomalyModel the version of the model that gave it; both absent
	// when the call was not scored (no model, or it failed before the
	// schema stage passed).
	AnomalyScore *float64 `json:"anomaly_score,omitempty"`
	AnomalyModel string   `json:"anomaly_model,omitempty"`
	// Speculative: the engine ran this call ahead of time for a predicted
	// one (pipeline's speculate.go); nobody asked for it. SpeculativeHit:
	// a real call answered from such a run, SpeculationOf that run's
	// call_id — so a speculative record is used when a later record names
	// it, wasted otherwise (Speculations).
	Speculative    bool   `json:"speculative,omitempty"`
	SpeculativeHit bool   `json:"speculative_hit,omitempty"`
	SpeculationOf  string `json:"speculation_of,omitempty"`
	// Replayed: a retry of a claimed call answered with its first
	// attempt's outcome (pipeline's claim.go); it ran nothing, and that
	// first attempt has its own record.
	Replayed bool `json:"replayed,omitempty"`
	// Provenance are where each argument came from, by argument
	// ("space:documents/a.pdf (untrusted)"), and Level2 the level-2
	// verdict with its reason (a flow that held the call, the intent
	// verifier's judgement); absent when level 2 did not check the call.
	Provenance map[string][]string `json:"provenance,omitempty"`
	Level2     string              `json:"level2,omitempty"`
}

// Genesis is the Prev of the first record of a log.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// AppendBody writes the record's fields after seq and prev, closing brace
// included: the part of its line that does not depend on the chain. It runs
// in the caller's goroutine, in parallel with other callers; only the chain
// fields are left for the single writer (AppendLine). It is hand-written
// because encoding/json's reflection would cost more than the rest of the
// pipeline for a no-op tool.
func (r *Record) AppendBody(b []byte) []byte {
	b = append(b, `"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","call_id":`...)
	b = appendString(b, r.CallID)
	b = append(b, `,"caller":`...)
	b = appendString(b, r.Caller)
	if r.Provider != "" {
		b = append(b, `,"provider":`...)
		b = appendString(b, r.Provider)
	}
	b = append(b, `,"tool":`...)
	b = appendString(b, r.Tool)
	if r.Version != "" {
		b = append(b, `,"version":`...)
		b = appendString(b, r.Version)
	}
	if r.MigratedFrom != "" {
		b = append(b, `,"migrated_from":`...)
		b = appendString(b, r.MigratedFrom)
	}
	if r.Migration != "" {
		b = append(b, `,"migration":`...)
		b = appendString(b, r.Migration)
	}
	b = append(b, `,"params_sha256":`...)
	b = appendString(b, r.ParamsSHA256)
	if r.ParamsBytes != 0 {
		b = append(b, `,"params_bytes":`...)
		b = strconv.AppendInt(b, int64(r.ParamsBytes), 10)
	}
	b = append(b, `,"outcome":`...)
	b = appendString(b, r.Outcome)
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, r.Error)
	}
	b = append(b, `,"latency_ns":`...)
	b = strconv.AppendInt(b, r.LatencyNs, 10)
	if r.Intent != "" {
		b = append(b, `,"intent":`...)
		b = appendString(b, r.Intent)
	}
	if r.Review != "" {
		b = append(b, `,"review":`...)
		b = appendString(b, r.Review)
	}
	if r.Reviewer != "" {
		b = append(b, `,"reviewer":`...)
		b = appendString(b, r.Reviewer)
	}
	if r.AnomalyScore != nil {
		b = append(b, `,"anomaly_score":`...)
		b = appendScore(b, *r.AnomalyScore)
	}
	if r.AnomalyModel != "" {
		b = append(b, `,"anomaly_model":`...)
		b = appendString(b, r.AnomalyModel)
	}
	if r.Speculative {
		b = append(b, `,"speculative":true`...)
	}
	if r.SpeculativeHit {
		b = append(b, `,"speculative_hit":true`...)
	}
	if r.SpeculationOf != "" {
		b = append(b, `,"speculation_of":`...)
		b = appendString(b, r.SpeculationOf)
	}
	if r.Replayed {
		b = append(b, `,"replayed":true`...)
	}
	if len(r.Provenance) > 0 {
		b = append(b, `,"provenance":{`...)
		for i, k := range slices.Sorted(maps.Keys(r.Provenance)) { // encoding/json's order
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if r.Provenance[k] == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '[')
			for j, l := range r.Provenance[k] {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendString(b, l)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if r.Level2 != "" {
		b = append(b, `,"level2":`...)
		b = appendString(b, r.Level2)
	}
	return append(b, '}')
}

// AppendLine appends the line of the record at seq whose body (AppendBody)
// follows the record whose line hashes to prev, newline excluded, and
// returns the line's SHA-256 — the next record's prev. Every backend writes
// its lines with it, so one Verify rule (and one chain) holds for all.
func AppendLine(b []byte, seq uint64, prev [32]byte, body []byte) ([]byte, [32]byte) {
	start := len(b)
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"prev":"`...)
	b = hex.AppendEncode(b, prev[:])
	b = append(b, `",`...)
	b = append(b, body...)
	return b, sha256.Sum256(b[start:])
}

// AppendChainLine is AppendLine for a log kept as several chains (store/pg:
// one per process, their records numbered from one sequence every chain
// shares): the line names its chain, {"seq":SEQ,"chain":CHAIN,"prev":"HEX",
// then the body, so a record cannot be moved to another chain without its
// hash changing. prev is the hash of the chain's previous line (Genesis's
// bytes for its first); seq is the record's place in the merged order and
// only increases along a chain (NewChainOf checks it).
func AppendChainLine(b []byte, seq, chain uint64, prev [32]byte, body []byte) ([]byte, [32]byte) {
	start := len(b)
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"chain":`...)
	b = strconv.AppendUint(b, chain, 10)
	b = append(b, `,"prev":"`...)
	b = hex.AppendEncode(b, prev[:])
	b = append(b, `",`...)
	b = append(b, body...)
	return b, sha256.Sum256(b[start:])
}

// appendScore writes a score as encoding/json writes a float64: the
// shortest decimal, never an exponent for a value in [1e-6, 1e21) or 0 —
// and a score is in [0, 1] with 3 decimals. Anything else (a caller's
// bug) is clamped rather than written as a line Verify would reject.
func appendScore(b []byte, s float64) []byte {
	if !(s >= 0.000001) { // NaN too
		s = 0
	} else if s > 1 {
		s = 1
	}
	return strconv.AppendFloat(b, s, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does, so every line is valid JSON whatever a caller sent.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Speculations resolves the speculative records of recs: used are the
// call ids some later real call was answered from (its SpeculationOf),
// wasted the speculative calls no record names.
func Speculations(recs []Record) (used, wasted []string) {
	named := map[string]bool{}
	for _, r := range recs {
		if r.SpeculationOf != "" {
			named[r.SpeculationOf] = true
		}
	}
	for _, r := range recs {
		if !r.Speculative {
			continue
		}
		if named[r.CallID] {
			used = append(used, r.CallID)
		} else {
			wasted = append(wasted, r.CallID)
		}
	}
	return used, wasted
}
