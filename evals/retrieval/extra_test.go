package retrieval

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// TestExtraSetsLoad: every extra training set is in the binary, has tools
// and requests, and every request's gold is one of its tools.
func TestExtraSetsLoad(t *testing.T) {
	for _, name := range ExtraSets {
		ds, err := LoadExtra(name)
		if err != nil {
			t.Fatal(err)
		}
		if ds.Name != name || len(ds.Docs) < 50 || len(ds.Queries) < 100 {
			t.Fatalf("%s: name %q, %d tools, %d requests", name, ds.Name, len(ds.Docs), len(ds.Queries))
		}
		ids := map[string]bool{}
		for _, d := range ds.Docs {
			ids[d.ID] = true
		}
		for _, q := range ds.Queries {
			for _, g := range q.Gold {
				if !ids[g] {
					t.Fatalf("%s: request %s needs %q, not among its tools", name, q.ID, g)
				}
			}
		}
	}
	if _, err := LoadExtra("nosuchset"); err == nil {
		t.Fatal("an unknown set loaded")
	}
}

// TestHeldFiltersLeakingTools: a tool of the extra data that has a held-out
// tool's name (in another case, with other separators) or its description,
// the requests needing it, and a request that repeats a held-out request
// are dropped; the rest stays.
func TestHeldFiltersLeakingTools(t *testing.T) {
	mt := Dataset{Name: "metatool"}
	var held, kept *embeddings.Doc
	for i := 0; held == nil || kept == nil; i++ {
		d := embeddings.Doc{ID: fmt.Sprintf("Plugin_%d", i), Name: fmt.Sprintf("Plugin_%d", i),
			Description: fmt.Sprintf("tracks parcel shipments number %d across carriers worldwide", i)}
		mt.Docs = append(mt.Docs, d)
		last := &mt.Docs[len(mt.Docs)-1]
		if HeldOutTool(&mt, d.ID) {
			if held == nil {
				held = last
			}
		} else if kept == nil {
			kept = last
		}
	}
	heldCopy, keptCopy := *held, *kept
	// A request of an evaluation part: one needing the held-out tool.
	mt.Queries = []Query{{ID: "q", Text: "Where is my parcel  right now?", Gold: []string{heldCopy.ID}}}
	h := HeldOut([]Dataset{mt})

	extra := Dataset{Name: "extra", Docs: []embeddings.Doc{
		{ID: "a", Name: "plugin-" + heldCopy.Name[len("Plugin_"):], Description: "unrelated words only here"},
		{ID: "b", Name: "somethingElse", Description: heldCopy.Description + " today"},
		{ID: "c", Name: keptCopy.Name, Description: "converts currencies at the daily rate"},
		{ID: "d", Name: "getWeather", Description: "returns the weather forecast for a city"},
	}, Queries: []Query{
		{ID: "1", Text: "who knows", Gold: []string{"a"}},
		{ID: "2", Text: "track it", Gold: []string{"b", "d"}},
		{ID: "3", Text: "convert 10 euros", Gold: []string{"c"}},
		{ID: "4", Text: "where is my parcel right now?", Gold: []string{"d"}},
		{ID: "5", Text: "weather in Paris", Gold: []string{"d"}},
	}}
	// "a" is named like the held-out plugin once case and separators go;
	// "b" has its description and one more word.
	dropped, n := h.Filter(&extra)
	if want := []string{"a", "b"}; !reflect.DeepEqual(dropped, want) {
		t.Errorf("dropped tools %v, want %v", dropped, want)
	}
	if n != 3 {
		t.Errorf("dropped %d requests, want 3 (two needing a dropped tool, one repeating a held-out request)", n)
	}
	var left []string
	for _, q := range extra.Queries {
		left = append(left, q.ID)
	}
	if want := []string{"3", "5"}; !reflect.DeepEqual(left, want) {
		t.Errorf("requests left %v, want %v", left, want)
	}
	if len(extra.Docs) != 2 || extra.Docs[0].ID != "c" || extra.Docs[1].ID != "d" {
		t.Errorf("tools left %+v", extra.Docs)
	}
}

// TestExtraSetsHoldNoHeldOutTool: with the reference data, after the
// filter no tool of an extra set shares a name or a description with a
// held-out MetaTool or StableToolBench tool, and no request repeats one of
// their evaluation requests.
func TestExtraSetsHoldNoHeldOutTool(t *testing.T) {
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		t.Skip("DATA_DIR not set")
	}
	sets, err := Load([]string{filepath.Join(dir, TrainingFiles[0]), filepath.Join(dir, TrainingFiles[1]), filepath.Join(dir, TrainingFiles[2])})
	if err != nil {
		t.Fatal(err)
	}
	h := HeldOut(sets)
	if len(h.names) == 0 || len(h.descs) == 0 || len(h.requests) == 0 {
		t.Fatalf("nothing held out: %d names, %d descriptions, %d requests", len(h.names), len(h.descs), len(h.requests))
	}
	for _, name := range ExtraSets {
		ds, err := LoadExtra(name)
		if err != nil {
			t.Fatal(err)
		}
		dropped, n := h.Filter(&ds)
		t.Logf("%s: dropped %d tools %v, %d requests", name, len(dropped), dropped, n)
		for _, d := range ds.Docs {
			if h.Leaks(&d) {
				t.Errorf("%s: tool %s still looks held out", name, d.ID)
			}
		}
		for _, q := range ds.Queries {
			if h.requests[normText(q.Text)] {
				t.Errorf("%s: request %s repeats a held-out request", name, q.ID)
			}
		}
	}
}
