// Package recommend evaluates the recommender's learning models on BFCL
// multi-turn conversations: for every ground-truth call, given the
// conversation so far, rank the functions of the conversation's classes,
// and compare AIRS (recommender.TextModel, RecentScores and History fused
// by recommender.Fusion) with three baselines (most frequent function,
// first-order Markov over the previous call, BM25 of the turn's text). It
// also simulates a user with a hidden preference to show Fusion learning
// online from feedback (Simulate). `airs eval recommend` is the command;
// EVALS.md, "Recommendations (BFCL multi-turn)", has the figures.
package recommend

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/airs-dev/airs/internal/gzfile"
	"github.com/airs-dev/airs/recommender"
)

// Conversation is one BFCL multi-turn conversation.
type Conversation struct {
	ID      string   `json:"id"`
	Classes []string `json:"involved_classes"`
	Turns   []Turn   `json:"turns"`
}

// Turn is one user turn and the ground-truth calls that answer it, in order.
type Turn struct {
	User  string   `json:"user"`
	Calls []string `json:"calls"`
}

// Function is one BFCL multi-turn function.
type Function struct {
	Class       string          `json:"class"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// CallName is a call's function name: the text before "(".
func CallName(call string) string {
	name, _, _ := strings.Cut(call, "(")
	return strings.TrimSpace(name)
}

// Doc is the function as a recommender.ToolDoc: name, description, and
// each parameter as "name: description".
func (f Function) Doc() recommender.ToolDoc {
	d := recommender.ToolDoc{Name: f.Name, Description: f.Description}
	var p struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(f.Parameters, &p) == nil {
		names := make([]string, 0, len(p.Properties))
		for n := range p.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			d.Params = append(d.Params, n+": "+p.Properties[n].Description)
		}
	}
	return d
}

// LoadConversations reads BFCL multi-turn conversations (base.jsonl.gz);
// calls are reduced to their function names.
func LoadConversations(path string) ([]Conversation, error) {
	cs, err := gzfile.ReadJSONLines[Conversation](path)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].ID == "" {
			return nil, fmt.Errorf("%s: conversation %d has no id", path, i+1)
		}
		for t := range cs[i].Turns {
			for k, c := range cs[i].Turns[t].Calls {
				cs[i].Turns[t].Calls[k] = CallName(c)
			}
		}
	}
	return cs, nil
}

// LoadFunctions reads the functions file (functions.jsonl.gz).
func LoadFunctions(path string) ([]Function, error) {
	fs, err := gzfile.ReadJSONLines[Function](path)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, fmt.Errorf("%s: no functions", path)
	}
	return fs, nil
}
