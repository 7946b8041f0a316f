package grammar_test

import (
	"fmt"
	"strings"

	"github.com/airs-dev/airs/grammar"
)

// A schema compiled to a grammar, then run over a model's vocabulary: at
// each step the mask says which tokens may come next, so a sampler that
// picks only among them writes valid JSON by construction.
func Example() {
	schema := []byte(`{
		"type": "object",
		"properties": {"ok": {"type": "boolean"}},
		"required": ["ok"],
		"additionalProperties": false
	}`)
	g, err := grammar.Compile(schema, grammar.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}

	// A toy vocabulary; a real one comes from grammar.LoadVocab (a GGUF, a
	// tokenizer.json, …). Token 7 ends generation.
	tokens := []string{`{`, `}`, `"ok"`, `:`, `true`, `false`, `"no"`, ``}
	vocab := &grammar.Vocab{Name: "toy", Size: len(tokens), EOS: []int{7}, Special: make([]bool, len(tokens))}
	for _, t := range tokens {
		vocab.Tokens = append(vocab.Tokens, []byte(t))
	}
	vocab.Special[7] = true
	tm := g.NewTokenMatcher(grammar.NewTokenizerInfo(vocab))

	mask := make([]uint64, (vocab.Size+63)/64)
	allowed := func() []string {
		tm.FillMask(mask)
		var out []string
		for id := range vocab.Size {
			if mask[id/64]&(1<<(id%64)) != 0 {
				if id == 7 {
					out = append(out, "<eos>")
				} else {
					out = append(out, tokens[id])
				}
			}
		}
		return out
	}
	// Drive it as a model would, choosing these tokens in turn.
	for _, id := range []int{0, 2, 3, 5, 1} {
		fmt.Printf("allowed %-22s -> %s\n", strings.Join(allowed(), " "), tokens[id])
		tm.Accept(id)
	}
	fmt.Println("allowed", strings.Join(allowed(), " "), "; complete:", tm.IsAccepting())
	// Output:
	// allowed {                      -> {
	// allowed "ok"                   -> "ok"
	// allowed :                      -> :
	// allowed true false             -> false
	// allowed }                      -> }
	// allowed <eos> ; complete: true
}

// Match checks a whole output at once.
func ExampleGrammar_Match() {
	g, err := grammar.Compile([]byte(`{"type": "integer", "minimum": 1, "maximum": 12}`), grammar.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range []string{"7", "13", "07", "1.0"} {
		fmt.Println(s, g.Match([]byte(s)))
	}
	// Output:
	// 7 true
	// 13 false
	// 07 false
	// 1.0 false
}
