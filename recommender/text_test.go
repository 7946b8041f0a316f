package recommender

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

var fsDocs = []ToolDoc{
	{Name: "mkdir", Description: "Create a new directory in the current directory.", Params: []string{"dir_name: the name of the new directory"}},
	{Name: "mv", Description: "Move a file or directory from one location to another.", Params: []string{"source", "destination"}},
	{Name: "diff", Description: "Compare two files line by line.", Params: []string{"file_name1", "file_name2"}},
	{Name: "post_tweet", Description: "Post a tweet for the authenticated user.", Params: []string{"content"}},
}

func TestTextModelLexical(t *testing.T) {
	m := NewTextModel(fsDocs)
	s := m.Scores("please create a directory called temp")
	if best(s) != "mkdir" || s["mkdir"] > 1 || s["mkdir"] <= 0 {
		t.Errorf("%v", s)
	}
	if s := m.Scores("tweet this"); best(s) != "post_tweet" {
		t.Errorf("%v", s)
	}
	if s := m.Scores("the of and"); len(s) != 0 {
		t.Errorf("stop words only: %v", s)
	}
}

func TestTextModelLearns(t *testing.T) {
	m := NewTextModel(fsDocs)
	if best(m.Scores("juxtapose the reports")) == "diff" {
		t.Fatal("no doc says juxtapose")
	}
	for i := 0; i < 30; i++ {
		m.Observe(fmt.Sprintf("juxtapose report %d with the old one", i), "diff")
		m.Observe(fmt.Sprintf("share report %d with my followers", i), "post_tweet")
	}
	if s := m.Scores("juxtapose the reports"); best(s) != "diff" {
		t.Errorf("learned: %v", s)
	}
	// A tool with no doc can be learned.
	for i := 0; i < 10; i++ {
		m.Observe("zip everything up", "archive")
	}
	if s := m.Scores("zip it"); best(s) != "archive" {
		t.Errorf("undocumented tool: %v", s)
	}
	for _, v := range m.Scores("juxtapose and move and create and zip") {
		if v < 0 || v > 1+1e-9 {
			t.Errorf("out of range %v", v)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var g TextModel
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"juxtapose the reports", "zip it", "move the file"} {
		a, c := m.Scores(q), g.Scores(q)
		for k, v := range a {
			if d := v - c[k]; d > 1e-12 || d < -1e-12 {
				t.Errorf("%q %s: %v vs %v", q, k, v, c[k])
			}
		}
	}
}

func TestTextModelBounded(t *testing.T) {
	m := NewTextModel(fsDocs)
	m.MaxTerms, m.MaxToolsPerTerm = 100, 3
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		m.Observe(fmt.Sprintf("word%d common", r.IntN(500)), fmt.Sprint("tool", r.IntN(10)))
	}
	if len(m.assoc) > 100 {
		t.Errorf("terms %d", len(m.assoc))
	}
	for term, a := range m.assoc {
		if len(a.tools) > 3 {
			t.Errorf("%s: %d tools", term, len(a.tools))
		}
	}
}

func best(s map[string]float64) string {
	b, bv := "", -1.0
	for k, v := range s {
		if v > bv || v == bv && k < b {
			b, bv = k, v
		}
	}
	return b
}

var words = strings.Fields(`file directory create delete move copy read write list search find send message email
post tweet user account order stock trade buy sell price ticket flight book cancel hotel car drive engine fuel
temperature weather map route distance sum mean average compute number convert currency translate text image
upload download share link comment like follow contact calendar event schedule reminder note task project`)

// synthTools is n tools with descriptions drawn from a small vocabulary
// and a unique name word each.
func synthTools(n int) []ToolDoc {
	r := rand.New(rand.NewPCG(7, 9))
	docs := make([]ToolDoc, n)
	for i := range docs {
		var d []string
		for k := 0; k < 12; k++ {
			d = append(d, words[r.IntN(len(words))])
		}
		docs[i] = ToolDoc{
			Name:        fmt.Sprintf("%s_%s_%d", words[r.IntN(len(words))], words[r.IntN(len(words))], i),
			Description: strings.Join(d, " ") + fmt.Sprintf(" tool%d", i),
			Params:      []string{words[r.IntN(len(words))] + ": the " + words[r.IntN(len(words))]},
		}
	}
	return docs
}

func BenchmarkTextModelScores(b *testing.B) {
	docs := synthTools(1000)
	m := NewTextModel(docs)
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		var q []string
		for k := 0; k < 10; k++ {
			q = append(q, words[r.IntN(len(words))])
		}
		m.Observe(strings.Join(q, " "), docs[r.IntN(len(docs))].Name)
	}
	text := "move the report file into the project directory and send a message to my contact about the flight"
	out := map[string]float64{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(out)
		m.AddScores(text, 1, out)
	}
	b.ReportMetric(float64(len(out)), "tools")
}
