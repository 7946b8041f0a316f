package selector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

type entries []selector.Entry

func (l entries) Callable(string) []selector.Entry { return l }

// chainsCatalog is the chains.Catalog over the same tools.
type chainsCatalog map[string]pipeline.Tool

func (c chainsCatalog) Tool(caller, name string) (pipeline.Tool, error) {
	t, ok := c[name]
	if !ok {
		return pipeline.Tool{}, fmt.Errorf("no tool %s", name)
	}
	return t, nil
}

// understoodSelector is a no-LLM selector over the built-in tools (and
// extra ones) with a file index of dir as the space "documents".
func understoodSelector(t testing.TB, dir string, extra ...pipeline.Tool) (*selector.Selector, chainsCatalog) {
	t.Helper()
	tools, err := builtin.Tools(builtin.Options{Spaces: map[string]string{"documents": dir}})
	if err != nil {
		t.Fatal(err)
	}
	var es entries
	cat := chainsCatalog{}
	for _, e := range tools {
		es = append(es, selector.Entry{Provider: builtin.ProviderID, Tool: e.Tool})
		cat[e.Tool.Name] = e.Tool
	}
	for _, tl := range extra {
		es = append(es, selector.Entry{Provider: "mcp:x", Tool: tl})
		cat[tl.Name] = tl
	}
	ctx := context.Background()
	ix, err := embeddings.Open(ctx, embeddings.NewLexical(embeddings.LexicalOptions{}), embeddings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, selector.Docs(es)); err != nil {
		t.Fatal(err)
	}
	files := understand.NewFileIndex()
	if err := files.Build("documents", dir); err != nil {
		t.Fatal(err)
	}
	s := selector.New(selector.Parts{Catalog: es, Index: ix,
		Config: selector.Config{Hints: selector.Hints{Spaces: []string{"documents"}}, MinCoverage: 0.4, RequireEvidence: true}})
	s.Env = func(string) understand.Env { return understand.Env{Spaces: []string{"documents"}, Index: files} }
	return s, cat
}

func writeFiles(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, f := range names {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("text"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type step struct {
	Function  string         `json:"function"`
	Arguments map[string]any `json:"arguments"`
	Foreach   string         `json:"foreach"`
}

func stepsOf(t *testing.T, pr *selector.PlanResult) []step {
	t.Helper()
	var steps []step
	for _, st := range pr.Plan.Steps {
		s := step{Function: st.Function, Foreach: st.Foreach}
		if err := json.Unmarshal(st.Arguments, &s.Arguments); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s)
	}
	return steps
}

func outline(st []step) []string {
	var out []string
	for _, s := range st {
		out = append(out, s.Function)
	}
	return out
}

// TestPlanUnderstood: plans of the built-in tools from the request's
// interpretation — a read never becomes a delete, arithmetic in words
// reaches the calculator, a summary or a comparison of files reads them
// first with the reader their type needs, every file of a folder is
// listed, read and summarized, several equally good files are choices.
func TestPlanUnderstood(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "final.txt", "draft.txt", "meeting-notes.md", "quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "papers/a.pdf", "papers/b.pdf")
	s, cat := understoodSelector(t, dir)
	ctx := context.Background()
	cases := map[string][]string{
		"what does final.txt in documents say":         {"read-file"},
		"sum 12 and 30":                                {"calculator"},
		"extract the text of the 2024 acme quote":      {"pdf-extract"},
		"summarize the meeting notes":                  {"read-file", "summarize"},
		"compare the two acme quotes":                  {"pdf-extract", "pdf-extract", "compare"},
		"what changed between draft.txt and final.txt": {"read-file", "read-file", "compare"},
		"summarize every paper in the papers folder":   {"list-files", "pdf-extract", "summarize"},
		"delete draft.txt":                             {"delete-file"},
	}
	for q, want := range cases {
		pr, err := s.PlanUnderstood(ctx, "me", q, cat)
		if err != nil || pr == nil {
			t.Errorf("%q: %v, %v", q, pr, err)
			continue
		}
		if got := outline(stepsOf(t, pr)); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
	pr, _ := s.PlanUnderstood(ctx, "me", "sum 12 and 30", cat)
	if expr, _ := stepsOf(t, pr)[0].Arguments["expression"].(string); !understand.IsExpression(expr) {
		t.Errorf("calculator expression %q does not parse", expr)
	}
	// Several equally good files: the choices, no guess.
	_, err := s.PlanUnderstood(ctx, "me", "read the acme quote", cat)
	var amb *selector.AmbiguousError
	if !errors.As(err, &amb) || len(amb.Choices) != 2 {
		t.Errorf("ambiguous: %v", err)
	}
	// A usual folder that is no space: said, not replaced.
	_, err = s.PlanUnderstood(ctx, "me", "list the files in my downloads folder", cat)
	var ms *selector.MissingSpaceError
	if !errors.As(err, &ms) || ms.Name != "downloads" {
		t.Errorf("missing space: %v", err)
	}
}

// TestDestructiveNeverFallback: requests that do not ask to delete never
// get delete-file, by Select or Plan, whatever they name.
func TestDestructiveNeverFallback(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "final.txt", "draft.txt")
	s, cat := understoodSelector(t, dir)
	ctx := context.Background()
	for _, q := range []string{"what does final.txt in documents say", "final.txt", "the draft, please", "draft.txt in documents",
		"don't delete final.txt", "read draft.txt before I delete it", "what is final.txt about"} {
		sel, err := s.Select(ctx, "me", q)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if sel.Function == "delete-file" {
			t.Errorf("%q selected delete-file", q)
		}
		pr, err := s.Plan(ctx, "me", q, cat)
		if err != nil {
			continue
		}
		if slices.Contains(outline(stepsOf(t, pr)), "delete-file") {
			t.Errorf("%q planned delete-file", q)
		}
	}
}

// BenchmarkPlanUnderstood: no-LLM planning with 1,000 registered tools
// and 100,000 files in the space (the index built once, outside the
// timing); reports the p99 of one plan's wall time and the process's CPU
// time per plan (the wall time includes whatever else the machine runs).
func BenchmarkPlanUnderstood(b *testing.B) {
	dir := b.TempDir()
	var names []string
	for i := 0; i < benchFiles; i++ {
		names = append(names, fmt.Sprintf("archive/f%03d/note-%06d.txt", i%1000, i))
	}
	names = append(names, "quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "meeting-notes.md", "final.txt")
	writeFiles(b, dir, names...)
	var extra []pipeline.Tool
	for i := 0; i < benchTools; i++ {
		extra = append(extra, pipeline.Tool{Name: fmt.Sprintf("svc%03d.op", i), Version: "1.0.0", ReadOnly: true,
			Description: fmt.Sprintf("Service %d: fetch record %d of the inventory, orders, weather, tickets or invoices by id.", i, i),
			Parameters:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The record id, e.g. inv-42."}},"required":["id"]}`)})
	}
	s, cat := understoodSelector(b, dir, extra...)
	ctx := context.Background()
	qs := []string{"what does final.txt say", "summarize the meeting notes", "compare the two acme quotes", "what's 12% of 350", "tell me a joke"}
	for _, q := range qs { // the caches of a running process (compiled patterns, tool shapes)
		if _, err := s.Plan(ctx, "me", q, cat); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	var cpu []float64 // the process's CPU time over each plan (includes GC work it triggers)
	cpu0 := processCPU()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, c := time.Now(), processCPU()
		if _, err := s.Plan(ctx, "me", qs[i%len(qs)], cat); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		cpu = append(cpu, processCPU()-c)
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.NumGC-ms0.NumGC), "gc-cycles")
	b.ReportMetric(float64(ms1.HeapAlloc)/(1<<20), "heap-MB")
	cpuBy := slices.Clone(cpu)
	sort.Float64s(cpu)
	b.ReportMetric(1000*cpu[len(cpu)*99/100], "cpu-p99-ms")
	b.ReportMetric(1000*(processCPU()-cpu0)/float64(b.N), "cpu-ms/op")
	if os.Getenv("AIRS_BENCH_DETAIL") != "" {
		// The slowest plans by CPU, with their request: which request, or
		// the garbage collector's work landing on any one, makes the tail.
		idx := make([]int, len(cpuBy))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(i, j int) bool { return cpuBy[idx[i]] > cpuBy[idx[j]] })
		for _, i := range idx[:min(len(idx), 20)] {
			b.Logf("cpu %.2f ms wall %v: %s", 1000*cpuBy[i], lat[i], qs[i%len(qs)])
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// The benchmark's scale: 1,000 tools (7 built-in) and 100,000 files.
var benchFiles, benchTools = 100_000, 993

// TestDestructivePartOnlyOnAsk: a request of several parts plans a
// destructive step only for the part that asks for it.
func TestDestructivePartOnlyOnAsk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "final.txt", "draft.txt")
	s, cat := understoodSelector(t, dir)
	ctx := context.Background()
	for q, wantDelete := range map[string]bool{
		"read final.txt, then draft.txt":              false,
		"read final.txt. then the draft in documents": false,
		"read draft.txt and then delete draft.txt":    true,
	} {
		pr, err := s.Plan(ctx, "me", q, cat)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		if got := slices.Contains(outline(stepsOf(t, pr)), "delete-file"); got != wantDelete {
			t.Errorf("%q: delete-file planned %v, want %v (%v)", q, got, wantDelete, outline(stepsOf(t, pr)))
		}
	}
}

// TestPluralMeansEveryFile: files named in the plural ("the papers", "all
// the notes", "each quote") are every matching file, not a choice among
// them: the files of one folder are listed and each read by the reader of
// its type, then summarized; files of several folders are each read and
// summarized; a deletion names each file it deletes. A plural word a file
// is named by ("the notes" for meeting-notes.md) stays one file to choose.
func TestPluralMeansEveryFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "meeting-notes.md", "notes/work-notes.txt", "papers/attention.pdf", "papers/bm25.pdf", "papers/grammars.pdf",
		"quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "contracts/lease-2023.txt", "contracts/lease-2024.txt", "todo.txt", "draft.txt", "final.txt")
	s, cat := understoodSelector(t, dir)
	ctx := context.Background()
	listEach := func(dir, reader string, then ...step) []step {
		return append([]step{
			{Function: "list-files", Arguments: map[string]any{"space": "documents", "dir": dir}},
			{Function: reader, Arguments: map[string]any{"space": "documents", "path": "{{item.path}}"}, Foreach: "{{steps.s1.output.files}}"},
		}, then...)
	}
	sumEach := step{Function: "summarize", Arguments: map[string]any{"text": "{{item.text}}"}, Foreach: "{{steps.s2.output}}"}
	read := func(p string) step {
		return step{Function: "read-file", Arguments: map[string]any{"space": "documents", "path": p}}
	}
	sum := func(id string) step {
		return step{Function: "summarize", Arguments: map[string]any{"text": "{{steps." + id + ".output.text}}"}}
	}
	del := func(p string) step {
		return step{Function: "delete-file", Arguments: map[string]any{"space": "documents", "path": p}}
	}
	cases := map[string][]step{
		"summarize the papers in my documents": listEach("papers", "pdf-extract", sumEach),
		"summarize each quote":                 listEach("quotes", "pdf-extract", sumEach),
		"read the leases":                      listEach("contracts", "read-file"),
		"summarize all the notes":              {read("meeting-notes.md"), sum("s1"), read("notes/work-notes.txt"), sum("s3")},
		"delete the leases":                    {del("contracts/lease-2023.txt"), del("contracts/lease-2024.txt")},
		"summarize draft.txt and final.txt":    {read("draft.txt"), sum("s1"), read("final.txt"), sum("s3")},
	}
	for q, want := range cases {
		pr, err := s.PlanUnderstood(ctx, "me", q, cat)
		if err != nil || pr == nil {
			t.Errorf("%q: %v, %v", q, pr, err)
			continue
		}
		if got := stepsOf(t, pr); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %+v\nwant %+v", q, got, want)
		}
	}
	_, err := s.PlanUnderstood(ctx, "me", "read the notes", cat)
	var amb *selector.AmbiguousError
	if !errors.As(err, &amb) || len(amb.Choices) != 2 {
		t.Errorf("read the notes: %v, want the two notes files to choose from", err)
	}
}

// TestDeleteWithoutWriteSpaceNamesTheGrant: a request to delete a file
// the caller may read but not write is answered with the tool that fits
// (delete-file, with the call it would make), the capability it lacks and
// where to grant it — not "no tool fits", and not a read of the file.
func TestDeleteWithoutWriteSpaceNamesTheGrant(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "papers/a.pdf", "papers/b.pdf", "draft.txt")
	pol := &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"reader": {{Kind: "ReadSpace", Arg: "documents"}}},
	}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"documents": dir}, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	cat := &selector.RegistryCatalog{Registry: reg, Policy: pol}
	ctx := context.Background()
	ix, err := embeddings.Open(ctx, embeddings.NewLexical(embeddings.LexicalOptions{}), embeddings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, selector.Docs(cat.Callable("reader"))); err != nil {
		t.Fatal(err)
	}
	files := understand.NewFileIndex()
	if err := files.Build("documents", dir); err != nil {
		t.Fatal(err)
	}
	s := selector.New(selector.Parts{Catalog: cat, Index: ix,
		Config: selector.Config{Hints: selector.Hints{Spaces: []string{"documents"}}, MinCoverage: 0.4, RequireEvidence: true}})
	s.Env = func(string) understand.Env { return understand.Env{Spaces: []string{"documents"}, Index: files} }
	for q, path := range map[string]string{
		"delete the 2024 acme quote": "quotes/acme-2024.pdf",
		"remove the papers":          "papers/a.pdf",
		"delete draft.txt":           "draft.txt",
	} {
		for name, do := range map[string]func() error{
			"plan":   func() error { _, err := s.PlanUnderstood(ctx, "reader", q, cat); return err },
			"select": func() error { _, err := s.Select(ctx, "reader", q); return err },
		} {
			err := do()
			var need *selector.CapabilityNeededError
			if !errors.As(err, &need) {
				t.Errorf("%s %q: %v, want the capability it needs", name, q, err)
				continue
			}
			var args map[string]any
			_ = json.Unmarshal(need.Arguments, &args)
			if need.Tool != "delete-file" || args["path"] != path || len(need.Missing) != 1 || need.Missing[0].String() != "WriteSpace(documents)" {
				t.Errorf("%s %q: %+v", name, q, need)
			}
			if msg := err.Error(); !strings.Contains(msg, "agents:\n    reader:\n      capabilities: [\"ReadSpace(documents)\", \"WriteSpace(documents)\"]") {
				t.Errorf("%s %q: the answer does not say how to grant it: %s", name, q, msg)
			}
			if !errors.Is(err, pipeline.ErrToolCapabilityDenied) {
				t.Errorf("%s %q: not a capability denial to errors.Is", name, q)
			}
		}
	}
	// A request that asks for no deletion is planned as ever.
	if pr, err := s.PlanUnderstood(ctx, "reader", "extract the text of the 2024 acme quote", cat); err != nil || pr == nil || !slices.Equal(outline(stepsOf(t, pr)), []string{"pdf-extract"}) {
		t.Errorf("extract: %v, %v", pr, err)
	}
}

// TestServiceVerbIsNoOtherTool: a request that leads with a service's verb
// ("send", "translate", "book") is not served by a tool that neither says
// that verb nor is what the request's words are about, whatever values of
// its types the request carries: "send 'x' to #general" is no summary of
// 'x'. A tool that says the verb serves it.
func TestServiceVerbIsNoOtherTool(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "final.txt")
	send := pipeline.Tool{Name: "chat.send_message", Version: "1.0.0", Description: "Send a message to a chat channel.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"channel":{"type":"string","description":"The channel, e.g. #general."},"text":{"type":"string","description":"The message text."}},"required":["channel","text"],"additionalProperties":false}`)}
	ctx := context.Background()
	s, cat := understoodSelector(t, dir)
	for _, q := range []string{"send 'meeting moved to 3pm' to #general", "translate 'good morning' into french", "please book 'dinner at 8' for friday"} {
		pr, err := s.PlanUnderstood(ctx, "me", q, cat)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if pr != nil && len(stepsOf(t, pr)) > 0 {
			t.Errorf("%q planned %v with the built-in tools only", q, outline(stepsOf(t, pr)))
		}
	}
	s, cat = understoodSelector(t, dir, send)
	pr, err := s.PlanUnderstood(ctx, "me", "send 'meeting moved to 3pm' to #general", cat)
	if err != nil || pr == nil || !slices.Equal(outline(stepsOf(t, pr)), []string{"chat.send_message"}) {
		t.Errorf("with a tool that sends: %v, %v", pr, err)
	}
	// A summary asked for with a quoted text is still one.
	if pr, err := s.PlanUnderstood(ctx, "me", "summarize 'the bus was late again and I missed the meeting'", cat); err != nil || pr == nil || !slices.Equal(outline(stepsOf(t, pr)), []string{"summarize"}) {
		t.Errorf("summarize a quoted text: %v, %v", pr, err)
	}
}

// TestDestinationIsNotRead: a file named as where the result goes is not
// read (it need not exist), the source is, and with no step that writes
// the plan says the result is shown, not saved.
func TestDestinationIsNotRead(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, "quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "draft.txt")
	s, cat := understoodSelector(t, dir)
	ctx := context.Background()
	for q, want := range map[string][]string{
		"summarize quotes/acme-2025.pdf and save it as notes.md":    {"pdf-extract", "summarize"},
		"save the summary of the 2025 acme quote to quote-notes.md": {"pdf-extract", "summarize"},
		"read draft.txt and write it to draft-copy.txt":             {"read-file"},
	} {
		pr, err := s.PlanUnderstood(ctx, "me", q, cat)
		if err != nil || pr == nil {
			t.Errorf("%q: %v, %v", q, pr, err)
			continue
		}
		if got := outline(stepsOf(t, pr)); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
		if !strings.Contains(pr.Notice, "shown, not saved") {
			t.Errorf("%q: notice %q does not say the result is not saved", q, pr.Notice)
		}
	}
}
