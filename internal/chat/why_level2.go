package chat

import (
	"sort"
	"strings"

	"github.com/airs-dev/airs/pipeline"
)

// whyLevel2 shows, for each call of the last request, where its arguments
// came from and what level 2 decided (pipeline Result.Provenance, Level2).
func (r *REPL) whyLevel2() {
	if r.last == nil {
		return
	}
	var results []*pipeline.Result
	for _, s := range r.last.Steps {
		if s.Result != nil {
			results = append(results, s.Result)
		}
	}
	for _, res := range results {
		if len(res.Provenance) == 0 && res.Level2 == "" {
			continue
		}
		r.printf("%s (level 2):\n", res.Tool)
		args := make([]string, 0, len(res.Provenance))
		for a := range res.Provenance {
			args = append(args, a)
		}
		sort.Strings(args)
		for _, a := range args {
			r.printf("  %s came from %s\n", a, strings.Join(res.Provenance[a], ", "))
		}
		if res.Level2 != "" {
			r.printf("  %s\n", res.Level2)
		}
	}
}
