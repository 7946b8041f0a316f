// Package anomaly scores a tool call by how unlike the audit log's calls it
// is: a small decision tree (CART, our own: gini, depth and leaf limits),
// trained offline on binned call features and frozen into a flat node array
// walked with integer compares only — no floating point at call time.
//
// Anomaly detection has no labels, so the tree is trained as a classifier
// between the log's calls (class 0, "seen") and a reference sample of
// plausible calls (class 1). Where the log is dense the reference is thin
// and the leaf scores low; where the log never goes (an agent at an hour it
// never works, fifty calls a minute from an agent that makes five a day, a
// tool it never called) the leaf holds only reference points and scores
// near 1. The score of a leaf is the (weighted) fraction of reference
// points in it: an estimate of u/(u+p), u the reference density, p the
// log's — a density ratio, which is what "how unusual is this call" means,
// obtained with a supervised learner.
//
// The reference has two parts. A tenth is drawn uniformly over every
// feature's bins, independently: it covers what no logged call comes near
// (an unknown caller, a burst rate no one reaches). Nine tenths are logged
// calls with one feature, chosen at random, redrawn uniformly: "this
// caller, this tool, this rate — at another hour". They make the tree learn
// how rare each feature's value is given the others, which the uniform part
// alone cannot where the log is narrow in several features at once (a bot
// that only ever runs at 02:00 fills one caller bin of 32; the uniform
// points in "that bot at 11:00" are too few for a leaf to score high, and
// the bot's run at 11:00, among the humans' calls, looked ordinary: 20% of
// such runs detected before, 99% after, on the traffic model's eval).
// Uniform rather than marginal resampling because the anomalies live in
// bins the log never fills (a marginal would put no reference point there
// and the tree could not learn them). A logged call that is its caller's
// first of a tool is not learned as normal (Train says why).
package anomaly

import "math/bits"

// Features are the seed's seven call features, as the pipeline computes
// them.
type Features struct {
	Caller          string
	Tool            string
	Hour            int  // 0–23, UTC hour of the call
	CallsLastMinute int  // this caller's calls in the last 60 s, this one included
	NovelTool       bool // the caller's first call of this tool
	ParamSizeBytes  int
	TrustLevel      int // the caller's configured trust level, 0 when none
}

// The binned feature tuple. Caller and tool are indexes into the model's
// vocabularies (0 is "unknown"); the counts are log2 bins.
const (
	fCaller = iota
	fTool
	fHour
	fCalls
	fNovel
	fSize
	fTrust
	numFeatures
)

// binCount is how many bins each feature has; categorical features are
// split by equality, ordinal ones by threshold.
var binCount = [numFeatures]int{
	fCaller: maxCallers + 1, fTool: maxTools + 1, fHour: 24, fCalls: 12, fNovel: 2, fSize: 16, fTrust: 4,
}

var categorical = [numFeatures]bool{fCaller: true, fTool: true}

const (
	maxCallers = 31
	maxTools   = 63
)

type bins [numFeatures]uint8

func log2Bin(n, max int) uint8 {
	if n <= 0 {
		return 0
	}
	b := bits.Len(uint(n))
	if b >= max {
		b = max - 1
	}
	return uint8(b)
}

// vocab maps a name to its bin; a name outside it is bin 0, "unknown".
type vocab map[string]uint8

func (m *Model) bin(f Features) bins {
	var b bins
	b[fCaller] = m.callers[f.Caller]
	b[fTool] = m.tools[f.Tool]
	h := f.Hour % 24
	if h < 0 {
		h += 24
	}
	b[fHour] = uint8(h)
	b[fCalls] = log2Bin(f.CallsLastMinute, binCount[fCalls])
	if f.NovelTool {
		b[fNovel] = 1
	}
	b[fSize] = log2Bin(f.ParamSizeBytes, binCount[fSize])
	t := f.TrustLevel
	if t < 0 {
		t = 0
	} else if t > 3 {
		t = 3
	}
	b[fTrust] = uint8(t)
	return b
}
