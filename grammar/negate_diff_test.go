package grammar

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The exact constructions — the complement (not), the difference
// that makes overlapping oneOf branches exact, and if/then/else — checked
// against the reference validator on generated instances. The generator
// knows nothing of the constructions: it draws JSON values built from the
// schema's own words (property names, strings, numbers and their
// neighbours), so boundaries and overlaps are hit often. Each table is also
// run with a bug planted in its construction (seededBug), and must then
// disagree with the validator: a differential test that a known bug passes
// would prove nothing.

var complementCases = []string{
	`{"not":{"type":"integer"}}`,
	`{"not":{"type":["string","null"]}}`,
	`{"not":{"minimum":3}}`,
	`{"not":{"maximum":-2}}`,
	`{"not":{"exclusiveMaximum":2.5}}`,
	`{"not":{"exclusiveMinimum":0}}`,
	`{"not":{"type":"number","minimum":1,"maximum":4}}`,
	`{"not":{"multipleOf":3}}`,
	`{"not":{"type":"string","minLength":2}}`,
	`{"not":{"maxLength":1}}`,
	`{"not":{"pattern":"^a"}}`,
	`{"not":{"enum":["a",1,null,true]}}`,
	`{"not":{"const":"ab"}}`,
	`{"not":{"required":["a","b"]}}`,
	`{"not":{"type":"object","properties":{"a":{"type":"integer"}}}}`,
	`{"not":{"minProperties":2}}`,
	`{"not":{"maxProperties":1}}`,
	`{"not":{"minItems":2}}`,
	`{"not":{"maxItems":1}}`,
	`{"not":{"prefixItems":[{"type":"integer"}],"items":false}}`,
	`{"not":{"contains":{"const":1}}}`,
	`{"not":{"items":{"type":"string"}}}`,
	`{"not":{"dependentRequired":{"a":["b"]}}}`,
	`{"not":{"anyOf":[{"type":"string"},{"minimum":5}]}}`,
	`{"not":{"allOf":[{"type":"integer"},{"maximum":4}]}}`,
	`{"not":{"not":{"const":"a"}}}`,
	`{"not":{"oneOf":[{"minimum":2},{"maximum":5}]}}`,
	`{"not":{"if":{"type":"integer"},"then":{"minimum":2},"else":{"type":"string"}}}`,
	`{"not":{"$ref":"#/$defs/p"},"$defs":{"p":{"type":"integer","minimum":0}}}`,
	`{"type":"object","properties":{"a":{"not":{"type":"string","maxLength":1}},"b":{"not":{"minimum":1}}}}`,
	`{"type":"array","items":{"not":{"enum":[1,"a"]}},"maxItems":3}`,
}

var differenceCases = []string{
	`{"oneOf":[{"minimum":2},{"maximum":5}]}`,
	`{"oneOf":[{"type":"integer"},{"type":"number","minimum":1.5}]}`,
	`{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}]}`,
	`{"oneOf":[{"type":"string","pattern":"^a"},{"type":"string","maxLength":2},{"const":1}]}`,
	`{"oneOf":[{"properties":{"a":{"type":"integer"}}},{"properties":{"a":{"type":"string"}},"required":["a"]}]}`,
	`{"type":"array","oneOf":[{"contains":{"const":1}},{"maxItems":1}]}`,
	`{"oneOf":[{"enum":["a","b",1]},{"enum":["b",2]},{"type":"string","minLength":1}]}`,
	`{"oneOf":[{"multipleOf":2},{"multipleOf":3}]}`,
	`{"type":"object","properties":{"v":{"oneOf":[{"type":"integer","maximum":3},{"minimum":2}]}}}`,
}

var ifThenElseCases = []string{
	`{"if":{"type":"integer"},"then":{"minimum":2},"else":{"type":"string"}}`,
	`{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`,
	`{"if":{"properties":{"k":{"const":"x"}}},"then":{"required":["a"]},"else":{"required":["b"]}}`,
	`{"if":{"minimum":3},"else":{"multipleOf":2}}`,
	`{"if":{"type":"string","pattern":"^a"},"then":{"maxLength":2},"else":{"not":{"type":"null"}}}`,
	`{"type":"array","if":{"contains":{"const":1}},"then":{"maxItems":2},"else":{"minItems":1}}`,
	`{"if":{"type":"object"},"then":{"properties":{"a":{"if":{"type":"integer"},"then":{"maximum":0},"else":{"type":"string"}}}}}`,
	`{"if":{"enum":["a","b"]},"then":{"const":"a"},"else":{"type":["number","object"]}}`,
}

var differentialTables = []struct {
	name  string
	cases []string
	bug   string
}{
	{"complement", complementCases, bugComplementBoundary},
	{"difference", differenceCases, bugDifference},
	{"if-then-else", ifThenElseCases, bugIfElse},
}

// instanceGen draws JSON texts from a schema's own words.
type instanceGen struct {
	rng   *rand.Rand
	keys  []string
	strs  []string
	nums  []string
	depth int
}

func newInstanceGen(schema string, rng *rand.Rand) *instanceGen {
	g := &instanceGen{rng: rng, depth: 2,
		keys: []string{"a", "zz"},
		strs: []string{"", "a", "ab", "abc", "b", "x", "A1"},
		nums: []string{"0", "1", "-1", "2.5", "7", "10", "-3.5"},
	}
	var doc any
	if err := json.Unmarshal([]byte(schema), &doc); err != nil {
		panic(err)
	}
	var walk func(v any, parent string)
	walk = func(v any, parent string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if parent == "properties" || parent == "dependentRequired" {
					g.keys = append(g.keys, k)
				}
				walk(x, k)
			}
		case []any:
			for _, x := range v {
				walk(x, parent)
			}
		case string:
			if parent == "required" || parent == "dependentRequired" {
				g.keys = append(g.keys, v)
			}
			if !strings.HasPrefix(v, "#") {
				g.strs = append(g.strs, v)
			}
		case float64:
			for _, d := range []float64{0, 1, -1, 0.5, -0.5} {
				g.nums = append(g.nums, strconv.FormatFloat(v+d, 'f', -1, 64))
			}
		}
	}
	walk(doc, "")
	slices.Sort(g.keys)
	g.keys = slices.Compact(g.keys)
	for _, k := range g.keys {
		g.strs = append(g.strs, k)
	}
	return g
}

func (g *instanceGen) value(depth int) string {
	n := 5
	if depth > 0 {
		n = 7
	}
	switch g.rng.IntN(n) {
	case 0:
		return []string{"null", "true", "false"}[g.rng.IntN(3)]
	case 1, 2:
		return g.nums[g.rng.IntN(len(g.nums))]
	case 3, 4:
		b, _ := json.Marshal(g.strs[g.rng.IntN(len(g.strs))])
		return string(b)
	case 5:
		items := make([]string, g.rng.IntN(4))
		for i := range items {
			items[i] = g.value(depth - 1)
		}
		return "[" + strings.Join(items, ",") + "]"
	default:
		keys := slices.Clone(g.keys)
		g.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:g.rng.IntN(min(len(keys), 3)+1)]
		parts := make([]string, len(keys))
		for i, k := range keys {
			kb, _ := json.Marshal(k)
			parts[i] = string(kb) + ":" + g.value(depth-1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

// differential compares the grammar with the validator on draws instances
// of schema; it returns the disagreements (at most a few) and how many
// valid and invalid instances were drawn.
func differential(t *testing.T, schema string, draws int, seed uint64) (diffs []string, nValid, nInvalid int) {
	t.Helper()
	g, err := Compile([]byte(schema), Options{})
	if err != nil {
		return []string{"compile: " + err.Error()}, 0, 0
	}
	val := newValidator(t, []byte(schema))
	gen := newInstanceGen(schema, rand.New(rand.NewPCG(seed, 20)))
	seen := map[string]bool{}
	for range draws {
		x := gen.value(gen.depth)
		if seen[x] {
			continue
		}
		seen[x] = true
		want := val.valid([]byte(x))
		if want {
			nValid++
		} else {
			nInvalid++
		}
		if got := g.Match([]byte(x)); got != want && len(diffs) < 5 {
			diffs = append(diffs, fmt.Sprintf("%s: grammar %v, validator %v", x, got, want))
		}
	}
	return diffs, nValid, nInvalid
}

func TestConstructionsDifferential(t *testing.T) {
	for _, tab := range differentialTables {
		t.Run(tab.name, func(t *testing.T) {
			for i, schema := range tab.cases {
				diffs, nValid, nInvalid := differential(t, schema, 3000, uint64(i))
				for _, d := range diffs {
					t.Errorf("%s: %s", schema, d)
				}
				if nValid == 0 || nInvalid == 0 {
					t.Errorf("%s: the generator drew %d valid and %d invalid instances: want both", schema, nValid, nInvalid)
				}
			}
		})
	}
}

// TestConstructionsDifferentialCatchSeededBugs: with its construction's
// bug planted, each table disagrees with the validator on some schema.
func TestConstructionsDifferentialCatchSeededBugs(t *testing.T) {
	defer func() { seededBug = "" }()
	for _, tab := range differentialTables {
		seededBug = tab.bug
		caught := 0
		for i, schema := range tab.cases {
			if diffs, _, _ := differential(t, schema, 3000, uint64(i)); len(diffs) > 0 {
				caught++
			}
		}
		seededBug = ""
		if caught == 0 {
			t.Errorf("%s: the bug %q went unnoticed by all %d schemas", tab.name, tab.bug, len(tab.cases))
		} else {
			t.Logf("%s: bug %q caught by %d of %d schemas", tab.name, tab.bug, caught, len(tab.cases))
		}
	}
}

// TestConstructionsSampling: a random model under the masks of every
// schema above never dead-ends, and each output validates.
func TestConstructionsSampling(t *testing.T) {
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	rng := rand.New(rand.NewPCG(20, 5))
	for _, tab := range differentialTables {
		for _, schema := range tab.cases {
			g, err := Compile([]byte(schema), Options{MaxStringBytes: 16, MaxContainerItems: 4})
			if err != nil {
				t.Fatalf("%s: %v", schema, err)
			}
			sampleValidates(t, schema, g, newValidator(t, []byte(schema)), ti, bits, rng, 20)
		}
	}
}
