package selector

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"slices"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// Does a candidate fit the request at all? No-LLM mode asks this of every
// candidate before it tries it, with a small logistic model over what the
// selector already knows of the pair: how close the request is to the tool
// (dense similarity, coverage of its words), whether it names what the tool
// is about (understand.AsksFor and the parts of it), whether the tool's
// arguments can be taken from its words (ExtractArgumentsReport), whether
// the tool's text has what the request asks for, and how the candidate
// stands against the others offered. One threshold on one probability, not
// a pile of hand-set floors; the weights are learned on one half of BFCL
// (evals/predict.TrainDefaultFit) and EVALS.md reports the other half apart.

// The features of FitFeatures, in order.
const (
	FitSimilarity    = iota // dense cosine of request and tool
	FitCoverage             // Coverage: share of the request's words the tool's text uses
	FitAsks                 // understand.AsksFor: 1 or 0
	FitNamedShare           // share of the name's subjects the request names (1 for a name with none)
	FitAsksKind             // understand.AsksKind: the request asks for the kind of value the name says
	FitMissingShare         // share of required arguments extraction had to invent
	FitSimilarityGap        // similarity minus the best other candidate's (0 alone)
	FitCoverageGap          // coverage minus the best other candidate's (0 alone)
	FitToolCoverage         // share of the tool name's words the request uses
	FitEvidenceShare        // share of the tool's parameters given a value from the request's words
	FitEvidenceCount        // how many (capped at 4, over 4)
	FitQuestion             // the request is a question about something (who, what is, how many, …)
	FitParamsNamed          // share of the tool's parameters whose name the request uses a word of
	FitObjectMissing        // share of the words of what the request asks for ("the area of …") the tool's text lacks
	NumFitFeatures
)

// FitFeatureNames name the features, for the weights' file and reports.
var FitFeatureNames = [NumFitFeatures]string{
	"similarity", "coverage", "asks", "named_share", "asks_kind",
	"missing_share", "similarity_gap", "coverage_gap", "tool_coverage",
	"evidence_share", "evidence_count", "question", "params_named", "object_missing",
}

// FitModel is a logistic model of "this candidate fits the request". A
// candidate whose probability is under Threshold is not tried. The zero
// FitModel accepts every candidate (probability ½ ≥ 0).
type FitModel struct {
	Bias      float64
	Weights   [NumFitFeatures]float64
	Threshold float64
}

// Prob is the model's probability that the candidate with features x fits.
func (m FitModel) Prob(x [NumFitFeatures]float64) float64 {
	z := m.Bias
	for i, w := range m.Weights {
		z += w * x[i]
	}
	return 1 / (1 + math.Exp(-z))
}

// Fits reports whether a candidate with features x is tried.
func (m FitModel) Fits(x [NumFitFeatures]float64) bool { return m.Prob(x) >= m.Threshold }

// fitModel is the model in force for cfg: Config.Fit, else DefaultFitModel.
func (c Config) fitModel() FitModel {
	if c.Fit != nil {
		return *c.Fit
	}
	return DefaultFitModel
}

// NoFitOff is a FitModel that tries every candidate (Config.Fit to turn
// the decision off).
var NoFitOff = &FitModel{}

// FitFeatures are the features of candidate i of cands (ranked, their
// Score holding similarity and coverage) for request, t being its tool.
func FitFeatures(request string, cands []Candidate, i int, t pipeline.Tool) [NumFitFeatures]float64 {
	var x [NumFitFeatures]float64
	c := cands[i]
	x[FitSimilarity] = c.Score[ScoreSimilarity]
	x[FitCoverage] = c.Score[ScoreCoverage]
	if understand.AsksFor(request, t.Name, t.Parameters) {
		x[FitAsks] = 1
	}
	if subs := understand.Subjects(t.Name); len(subs) == 0 {
		x[FitNamedShare] = 1
	} else {
		x[FitNamedShare] = float64(len(understand.NamedSubjects(request, t.Name))) / float64(len(subs))
	}
	if understand.AsksKind(request, t.Name) {
		x[FitAsksKind] = 1
	}
	if args, missing, err := ExtractArgumentsReport(t.Parameters, request, Hints{}); err == nil {
		if n := requiredCount(t.Parameters); n > 0 {
			x[FitMissingShare] = float64(len(missing)) / float64(n)
		}
		if empty, _, err := ExtractArgumentsReport(t.Parameters, "", Hints{}); err == nil {
			given := 0
			for k, v := range args {
				if !reflect.DeepEqual(v, empty[k]) {
					given++
				}
			}
			if n := propertyCount(t.Parameters); n > 0 {
				x[FitEvidenceShare] = float64(given) / float64(n)
			}
			x[FitEvidenceCount] = float64(min(given, 4)) / 4
		}
	}
	if reQuestion.MatchString(request) {
		x[FitQuestion] = 1
	}
	bestSim, bestCov, others := math.Inf(-1), math.Inf(-1), false
	for j, o := range cands {
		if j == i {
			continue
		}
		others = true
		bestSim = max(bestSim, o.Score[ScoreSimilarity])
		bestCov = max(bestCov, o.Score[ScoreCoverage])
	}
	if others {
		x[FitSimilarityGap] = x[FitSimilarity] - bestSim
		x[FitCoverageGap] = x[FitCoverage] - bestCov
	}
	x[FitToolCoverage] = nameCoverage(request, t.Name)
	x[FitParamsNamed] = paramsNamed(request, t.Parameters)
	if obj := askedObject(request); len(obj) > 0 {
		doc := toolTerms(t)
		miss := 0
		for _, w := range obj {
			if !doc[w] && !sharesStem(w, doc) {
				miss++
			}
		}
		x[FitObjectMissing] = float64(miss) / float64(len(obj))
	}
	return x
}

// reQuestion is a request that asks about something rather than for
// something done: who, why, what is, how many, …
var reQuestion = regexp.MustCompile(`(?i)^\s*(?:who|whom|whose|why|which|what(?:'s|\s+(?:is|are|was|were|does|do|did|kind|type|should|would))?|how\s+(?:many|much|does|do|did|is|are|can|to|long|often|frequent)|is|are|was|were|does|do|did)\b`)

// reAskedObject finds what a request asks for: the words after its
// leading ask ("calculate the", "what is the", "find a", "could you get
// me the") up to the first word that starts what qualifies it (of, for,
// in, with, …).
var reAskedObject = regexp.MustCompile(`(?i)^\s*(?:(?:please|can\s+you|could\s+you|would\s+you|i\s+(?:want|need|would\s+like|'d\s+like)\s+(?:you\s+)?to|help\s+me)\s+)?(?:calculate|compute|find|determine|estimate|get|give\s+me|tell\s+me|show\s+me|fetch|retrieve|look\s+up|search\s+for|what(?:'s|\s+is|\s+are|\s+was|\s+were))\s+(?:me\s+)?(?:the\s+|a\s+|an\s+)?([\p{L}][\p{L}\s'-]*?)\s+(?:of|for|in|at|from|to|between|with|that|which|who|when|if|given|using|by|on|near|a|an|the|is|are|will|would|should|do|does|did)\b`)

// askedObject is the analysed words of what the request asks for
// (reAskedObject), none when it does not start with an ask.
func askedObject(request string) []string {
	m := reAskedObject.FindStringSubmatch(request)
	if m == nil {
		return nil
	}
	return slices.DeleteFunc(embeddings.Terms(m[1]), func(w string) bool { return w == "like" })
}

// propertyCount is how many top-level properties the schema declares.
func propertyCount(schema json.RawMessage) int {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return 0
	}
	return len(s.Properties)
}

// requiredCount is how many top-level parameters the schema requires.
func requiredCount(schema json.RawMessage) int {
	var s struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return 0
	}
	return len(s.Required)
}

// nameCoverage is the share of the tool name's words (stemmed, verbs
// included) the request's words use.
func nameCoverage(request, name string) float64 {
	var nameWords []string
	for _, w := range embeddings.Terms(splitName(name)) {
		if !slices.Contains(nameWords, w) {
			nameWords = append(nameWords, w)
		}
	}
	if len(nameWords) == 0 {
		return 0
	}
	req := map[string]bool{}
	for _, w := range coverageTerms(request) {
		req[w] = true
	}
	hit := 0
	for _, w := range nameWords {
		if req[w] || sharesStem(w, req) {
			hit++
		}
	}
	return float64(hit) / float64(len(nameWords))
}

// paramsNamed is the share of the schema's top-level parameters one of
// whose name's words (stemmed) the request uses.
func paramsNamed(request string, schema json.RawMessage) float64 {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return 0
	}
	req := map[string]bool{}
	for _, w := range embeddings.Terms(request) {
		req[w] = true
	}
	hit := 0
	for name := range s.Properties {
		for _, w := range embeddings.Terms(splitName(name)) {
			if req[w] || sharesStem(w, req) {
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(len(s.Properties))
}

// splitName turns a tool name's separators into spaces.
func splitName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c == '_' || c == '.' || c == '-' || c == '/' {
			b[i] = ' '
		}
	}
	return string(b)
}

// indexOf is the position of the candidate named name in cands.
func indexOf(cands []Candidate, name string) int {
	for i, c := range cands {
		if c.Name == name {
			return i
		}
	}
	return 0
}

// fitRefusal keeps the closest candidate the fit decision refused, for the
// notice that says why the answer is "none".
type fitRefusal struct {
	name string
	prob float64
}

func (r *fitRefusal) note(name string, prob float64) {
	if r.name == "" || prob > r.prob {
		r.name, r.prob = name, prob
	}
}
