// Package anomaly scores a tool call by how unlike its caller's recorded
// calls it is, with no LLM and no labels: a profile per agent (the tools
// it calls, how fast, how large its arguments are for each tool, the
// folders its arguments name, the hours it works), learned from the audit
// log, and one score per feature — the most unusual decides.
//
// Each feature's score is bounded by the evidence behind it, so a short
// history abstains instead of screaming:
//
//   - a tool (or top-level folder) new to the agent scores 1 − p, p the
//     agent's rate of taking up new ones after its first few calls,
//     shrunk toward everyone's rate while its own history is short, so an
//     agent with forty calls of three tools is sure and one that tries a
//     new tool every few calls is not; a tool or folder other agents use,
//     or one new to an agent with little history of its own, is flagged
//     for review but not held (usedToolCap);
//   - the call rate is one-sided (only faster than usual is unusual) and
//     compared with the fastest the agent was seen (in the last 10, 20 and
//     30 s, the last minute, and the span of its last calls), a bound
//     widened while the agent has few active minutes behind it;
//   - an argument size is compared with the largest the agent sent that
//     tool, widened while there are few of them;
//   - the hour of day is judged only once the agent has several days of
//     history (MinDaysForHour), from how many of its days it was active
//     near that hour.
//
// Model.Judges says what the model can judge yet for an agent (`airs guard
// status`). Training is counting, so a model is updated with new calls
// without replaying the old ones (Model.Update).
package anomaly

import (
	"bytes"
	"slices"
	"strings"
	"time"
)

// Features are one call's facts as the scorer sees them: what the call
// is, and what the Tracker knows of the caller's recent calls.
type Features struct {
	Caller string
	Tool   string
	// Unix is the call's time (seconds): the hour of day and, in
	// training, the day and minute it counts in.
	Unix int64
	// Last10s, Last20s, Last30s and LastMinute are the caller's calls in
	// the last 10, 20, 30 and 60 s, this one included (every call counts,
	// held ones too). The windows between 10 s and a minute see a
	// sustained burst before the minute's count does, once the agent's
	// quick runs of a few seconds would have ended.
	Last10s, Last20s, Last30s, LastMinute int
	// Span is the time the caller's last SpanCalls calls (this one
	// included) took; 0 while it has made fewer.
	Span time.Duration
	// KnownTool: the Tracker has seen the caller call Tool as a usual call
	// since it started (not held, or approved by a person); the model
	// knows the calls it was trained on itself.
	KnownTool      bool
	ParamSizeBytes int
	// Folders are the folders the arguments name (FoldersOf), NFolders of
	// them; KnownFolders has bit i set when the Tracker has seen the
	// caller use Folders[i] as a usual call.
	Folders      [MaxFolders]uint64
	NFolders     int
	KnownFolders uint8
	// Tops are the top-level folders of Folders (the same hash when a
	// folder is one level deep); KnownTops like KnownFolders.
	Tops      [MaxFolders]uint64
	KnownTops uint8
	// LiveFolderCalls, LiveLateFolderCalls and LiveLateNewTops are the
	// Tracker's evidence about the caller's folders (Recent), used when
	// the model has less: the audit log keeps no arguments, so a model
	// trained on it knows no folders and the running airs learns them
	// itself.
	LiveFolderCalls, LiveLateFolderCalls, LiveLateNewTops int
}

// Hour is the call's UTC hour of day.
func (f *Features) Hour() int { return int((f.Unix%86400 + 86400) % 86400 / 3600) }

// MaxFolders is how many folders of one call's arguments are looked at.
const MaxFolders = 4

// SpanCalls is how many of the caller's calls Features.Span spans.
const SpanCalls = 5

// maxArgScan bounds how much of the arguments FoldersOf reads: paths are
// short and come first in every built-in tool's arguments; a megabyte of
// text is not scanned for them on every call.
const maxArgScan = 4096

// SetFolders sets Folders, Tops and NFolders from the JSON arguments.
func (f *Features) SetFolders(args []byte) {
	f.Folders, f.Tops, f.NFolders = FoldersOf(args)
}

// FoldersOf finds the folders the JSON arguments name: every string value
// that looks like a path (has a '/' and no white space or newline), cut
// to its first two folder levels ("hr/passwords.txt" is folder "hr",
// "docs/a/b/c.md" is "docs/a"), hashed, and each one's top-level folder
// ("docs"). A file at the top level is folder ".". Non-JSON arguments
// (MessagePack) name none.
func FoldersOf(args []byte) (out, tops [MaxFolders]uint64, n int) {
	if len(args) > maxArgScan {
		args = args[:maxArgScan]
	}
	for i := 0; i < len(args) && n < MaxFolders; i++ {
		if args[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(args) && args[j] != '"' {
			if args[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(args) {
			break
		}
		s := args[i+1 : j]
		i = j
		if j+1 < len(args) && (args[j+1] == ':' || (args[j+1] == ' ' && j+2 < len(args) && args[j+2] == ':')) {
			continue // an object key, not a value
		}
		if d, ok := folderOf(s); ok {
			h := hashFolder(d)
			dup := false
			for k := 0; k < n; k++ {
				dup = dup || out[k] == h
			}
			if !dup {
				out[n] = h
				tops[n] = h
				if k := bytes.IndexByte(d, '/'); k >= 0 {
					tops[n] = hashFolder(d[:k])
				}
				n++
			}
		}
	}
	return out, tops, n
}

// folderOf is a path's folder, two levels at most; false when s is not a
// path.
func folderOf(s []byte) ([]byte, bool) {
	if len(s) == 0 || len(s) > 1024 || bytes.IndexByte(s, '/') < 0 || bytes.ContainsAny(s, " \t\n") ||
		bytes.Contains(s, []byte("://")) {
		return nil, false
	}
	for len(s) > 0 && (s[0] == '/' || (s[0] == '.' && len(s) > 1 && s[1] == '/')) {
		if s[0] == '.' {
			s = s[2:]
		} else {
			s = s[1:]
		}
	}
	last := bytes.LastIndexByte(s, '/')
	if last < 0 {
		return []byte("."), true
	}
	d := s[:last]
	if k := bytes.IndexByte(d, '/'); k >= 0 {
		if k2 := bytes.IndexByte(d[k+1:], '/'); k2 >= 0 {
			d = d[:k+1+k2]
		}
	}
	return d, true
}

// hashFolder is FNV-1a 64 of a folder, never 0 (0 is "none").
func hashFolder(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	if h == 0 {
		h = 1
	}
	return h
}

func sortJudgements(j []Judgement) {
	slices.SortFunc(j, func(a, b Judgement) int { return strings.Compare(a.Agent, b.Agent) })
}
