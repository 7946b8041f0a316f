package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// The builtins go through the real Manager: their schemas compile in the
// pipeline's validator, calls pass all seven stages, and a caller without
// ReadSpace(documents) cannot list documents.
func TestRegisterThroughManager(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "report.pdf"), minimalPDF([][]string{{"Quarterly report", "Revenue: $4,200"}}))
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("remember the milk\n"))

	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	opts := Options{Spaces: map[string]string{"documents": dir, "downloads": t.TempDir()}, Policy: testPolicy}
	if err := Register(reg, opts); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range reg.List() {
		if r.Provider != ProviderID || r.Tool.Trust != pipeline.TL3 || r.Tool.Version == "" || len(r.Tool.Description) < 80 {
			t.Errorf("%s: provider %q trust %v version %q description %d chars", r.Tool.Name, r.Provider, r.Tool.Trust, r.Tool.Version, len(r.Tool.Description))
		}
		if !strings.Contains(string(r.Tool.Parameters), `"additionalProperties":false`) || len(r.Tool.ReturnSchema) == 0 {
			t.Errorf("%s: schemas not strict or no return_schema", r.Tool.Name)
		}
		names = append(names, r.Tool.Name)
	}
	if got := strings.Join(names, ","); got != "calculator,compare,delete-file,list-files,pdf-extract,read-file,summarize" {
		t.Fatalf("registered %s", got)
	}
	// The space parameter is an enum of the configured spaces, so a
	// grammar can only emit existing ones.
	lf, _ := reg.Get(ProviderID, "list-files", "")
	if !strings.Contains(string(lf.Tool.Parameters), `"enum":["documents","downloads"]`) {
		t.Errorf("list-files space enum: %s", lf.Tool.Parameters)
	}

	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: testPolicy})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	call := func(caller, tool, params string) (*pipeline.Result, error) {
		return m.Call(context.Background(), pipeline.Request{Tool: tool, Params: []byte(params), Caller: caller})
	}

	res, err := call("bob", "calculator", `{"expression":"2*(3+4)"}`)
	if err != nil || !strings.Contains(string(res.Output), `"result":14`) {
		t.Fatalf("calculator: %v %+v", err, res)
	}
	_, err = call("bob", "calculator", `{"expression":"1/0"}`)
	var pr *pipeline.ProviderRejected
	if !errors.As(err, &pr) || pr.Code != CodeDivisionByZero || pipeline.ExitCode(err) != 20 {
		t.Fatalf("1/0: %v", err)
	}
	_, err = call("bob", "calculator", `{"expression":7}`)
	if !errors.Is(err, pipeline.ErrSchemaValidationFailed) {
		t.Fatalf("wrong type: %v", err)
	}

	// alice holds ReadSpace(documents); bob holds nothing.
	res, err = call("alice", "list-files", `{"space":"documents","pattern":"*.pdf"}`)
	if err != nil || !strings.Contains(string(res.Output), `"path":"report.pdf"`) {
		t.Fatalf("alice lists documents: %v %s", err, res.Output)
	}
	_, err = call("bob", "list-files", `{"space":"documents"}`)
	var denied *pipeline.ToolCapabilityDenied
	if !errors.As(err, &denied) || denied.Required[0].String() != "ReadSpace(documents)" || pipeline.ExitCode(err) != 14 {
		t.Fatalf("bob lists documents: %v", err)
	}
	_, err = call("alice", "read-file", `{"space":"downloads","path":"x"}`)
	if !errors.As(err, &denied) {
		t.Fatalf("alice reads downloads: %v", err)
	}
	// Stage 3 (capabilities) runs before stage 4 (schema): an unknown space
	// is first a space alice may not read.
	_, err = call("alice", "list-files", `{"space":"elsewhere"}`)
	if !errors.As(err, &denied) || denied.Required[0].String() != "ReadSpace(elsewhere)" {
		t.Fatalf("space outside the enum: %v", err)
	}

	// The pricing example's building blocks: pdf-extract, then compare.
	res, err = call("alice", "pdf-extract", `{"space":"documents","path":"report.pdf"}`)
	if err != nil {
		t.Fatal(err)
	}
	var pdfOut pdfResult
	json.Unmarshal(res.Output, &pdfOut)
	params, _ := json.Marshal(map[string]string{"a": pdfOut.Text, "b": strings.Replace(pdfOut.Text, "4,200", "4,500", 1)})
	res, err = call("alice", "compare", string(params))
	if err != nil || !strings.Contains(string(res.Output), `"label":"Revenue","a":"$4,200","b":"$4,500"`) {
		t.Fatalf("compare: %v %s", err, res.Output)
	}
	res, err = call("alice", "summarize", `{"text":"Cats sleep a lot. Cats sleep in the sun. Dogs bark.","max_words":10}`)
	if err != nil || !strings.Contains(string(res.Output), `"method":"extractive"`) {
		t.Fatalf("summarize: %v %s", err, res.Output)
	}
}

func TestHandlersForManifests(t *testing.T) {
	hm, err := Handlers(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"builtin.calculator", "builtin.compare", "builtin.list-files", "builtin.pdf-extract", "builtin.read-file", "builtin.summarize"} {
		if _, err := hm.Resolve(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if _, err := Tools(Options{Spaces: map[string]string{"*": "/"}}); err == nil {
		t.Error("space named * accepted")
	}
}
