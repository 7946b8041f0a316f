// Package retrieval is the retrieval benchmark behind `airs eval retrieval`:
// it loads public tool-retrieval sets (MetaTool, StableToolBench, BFCL),
// recognising each file by its content, runs AIRS's hybrid retrieval and
// plain BM25 over the same registry, and reports Accuracy@1, Recall@5/10
// and NDCG@5/10.
package retrieval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airs-dev/airs/embeddings"

	"github.com/airs-dev/airs/internal/gzfile"
)

// Dataset is a registry of tools and the queries asked against it.
type Dataset struct {
	Name    string
	Docs    []embeddings.Doc
	Queries []Query
}

// Query is one request with the IDs of the tools that answer it.
type Query struct {
	ID   string
	Text string
	Gold []string
}

// Kind is what a data file holds, recognised from its content.
type Kind int

const (
	KindUnknown Kind = iota
	KindTools        // {"name","description",…} per line (MetaTool tools, MCP tools)
	KindQueries      // {"query","tools":[names]} per line (MetaTool queries)
	KindAPIList      // {"query","api_list","relevant APIs"} (StableToolBench)
	KindBFCL         // {"question","function","ground_truth"} (BFCL)
)

func (k Kind) String() string {
	return [...]string{"unknown", "tools", "queries", "api_list queries", "bfcl"}[k]
}

// readRecords reads a JSON Lines file (gzip or not), or a file holding one
// JSON array, as raw records.
func readRecords(path string) ([]json.RawMessage, error) {
	r, err := gzfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return parseRecords(path, data)
}

// parseRecords reads JSON Lines, or one JSON array, as raw records.
func parseRecords(path string, data []byte) ([]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(data, &arr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return arr, nil
	}
	var out []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", path, len(out)+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// Classify tells what a record set holds from its first record's keys.
func Classify(recs []json.RawMessage) Kind {
	if len(recs) == 0 {
		return KindUnknown
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(recs[0], &m) != nil {
		return KindUnknown
	}
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("api_list") && has("query"):
		return KindAPIList
	case has("question") && has("function"):
		return KindBFCL
	case has("query") && has("tools"):
		return KindQueries
	case has("name") && has("description"):
		return KindTools
	}
	return KindUnknown
}

// Load reads the given files and forms datasets: each queries file is asked
// against the union of all tools files; each api_list file is its own
// dataset over the pool of its queries' APIs; all BFCL files together form
// one dataset named "bfcl" over the pool of their functions.
func Load(paths []string) ([]Dataset, error) {
	files := make([]recordFile, 0, len(paths))
	for _, p := range paths {
		recs, err := readRecords(p)
		if err != nil {
			return nil, err
		}
		files = append(files, recordFile{p, recs})
	}
	return loadRecords(files)
}

// recordFile is a data file's path and its records.
type recordFile struct {
	path string
	recs []json.RawMessage
}

// loadRecords forms datasets from files already read, as Load does.
func loadRecords(files []recordFile) ([]Dataset, error) {
	var tools []embeddings.Doc
	toolSeen := map[string]bool{}
	type qfile struct {
		name string
		recs []json.RawMessage
	}
	var qfiles []qfile
	var out []Dataset
	var bfcl *Dataset
	bfclSeen := map[string]bool{}
	for _, file := range files {
		p, recs := file.path, file.recs
		switch Classify(recs) {
		case KindTools:
			for i, r := range recs {
				d, err := toolDoc(r)
				if err != nil {
					return nil, fmt.Errorf("%s: record %d: %w", p, i+1, err)
				}
				if !toolSeen[d.ID] {
					toolSeen[d.ID] = true
					tools = append(tools, d)
				}
			}
		case KindQueries:
			qfiles = append(qfiles, qfile{datasetName(p), recs})
		case KindAPIList:
			ds, err := loadAPIList(datasetName(p), recs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			out = append(out, ds)
		case KindBFCL:
			if bfcl == nil {
				bfcl = &Dataset{Name: "bfcl"}
			}
			if err := addBFCL(bfcl, bfclSeen, recs); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
		default:
			return nil, fmt.Errorf("%s: not a tools, queries, api_list or BFCL file", p)
		}
	}
	if len(qfiles) > 0 && len(tools) == 0 {
		return nil, fmt.Errorf("queries file %s needs a tools file beside it", qfiles[0].name)
	}
	// MetaTool names differ in case between files ("ResearchHelper" vs
	// "researchhelper"): gold names resolve case-insensitively.
	byLower := map[string]string{}
	for _, d := range tools {
		byLower[strings.ToLower(d.ID)] = d.ID
	}
	for _, qf := range qfiles {
		ds := Dataset{Name: qf.name, Docs: tools}
		for i, r := range qf.recs {
			var q struct {
				ID    any      `json:"id"`
				Query string   `json:"query"`
				Tools []string `json:"tools"`
			}
			if err := json.Unmarshal(r, &q); err != nil {
				return nil, fmt.Errorf("%s: record %d: %w", qf.name, i+1, err)
			}
			var gold []string
			for _, t := range q.Tools {
				if id, ok := byLower[strings.ToLower(t)]; ok {
					gold = append(gold, id)
				}
			}
			if len(gold) == 0 || q.Query == "" {
				continue
			}
			ds.Queries = append(ds.Queries, Query{ID: fmt.Sprint(q.ID), Text: q.Query, Gold: gold})
		}
		out = append(out, ds)
	}
	if bfcl != nil {
		out = append(out, *bfcl)
	}
	return out, nil
}

// datasetName is the file's base name without extensions and a trailing
// "_queries": metatool_queries.jsonl.gz → metatool.
func datasetName(p string) string {
	b := filepath.Base(p)
	if i := strings.IndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	return strings.TrimSuffix(b, "_queries")
}

// toolDoc reads a tools-file record: MetaTool ({name, description}) or MCP
// ({name, description, inputSchema|parameters|arguments, server}).
func toolDoc(r json.RawMessage) (embeddings.Doc, error) {
	var t struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Parameters  json.RawMessage `json:"parameters"`
		Arguments   json.RawMessage `json:"arguments"`
		Server      string          `json:"server"`
	}
	if err := json.Unmarshal(r, &t); err != nil {
		return embeddings.Doc{}, err
	}
	if t.Name == "" {
		return embeddings.Doc{}, fmt.Errorf("tool without a name")
	}
	d := embeddings.Doc{ID: t.Name, Name: t.Name, Description: t.Description, Group: t.Server}
	if t.Server != "" {
		d.ID = t.Server + "/" + t.Name
	}
	for _, s := range []json.RawMessage{t.InputSchema, t.Parameters, t.Arguments} {
		if len(s) > 0 {
			d.Params = embeddings.ParamsFromSchema(s)
			if d.Params == nil {
				d.Params = paramsFromList(s)
			}
			break
		}
	}
	return d, nil
}

// paramsFromList reads parameters given as a list of {name, description}.
func paramsFromList(s json.RawMessage) []embeddings.Param {
	var ps []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if json.Unmarshal(s, &ps) != nil {
		return nil
	}
	out := make([]embeddings.Param, 0, len(ps))
	for _, p := range ps {
		out = append(out, embeddings.Param{Name: p.Name, Description: p.Description})
	}
	return out
}

// APIID is the document ID of a RapidAPI endpoint: "tool/api".
func APIID(tool, api string) string { return tool + "/" + api }

type stbParam struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type stbAPI struct {
	Category    string          `json:"category_name"`
	Tool        string          `json:"tool_name"`
	API         string          `json:"api_name"`
	Description string          `json:"api_description"`
	Required    []stbParam      `json:"required_parameters"`
	Optional    []stbParam      `json:"optional_parameters"`
	Template    json.RawMessage `json:"template_response"`
}

// loadAPIList pools every query's api_list into one registry (first
// occurrence of each tool/api wins) with gold = "relevant APIs".
func loadAPIList(name string, recs []json.RawMessage) (Dataset, error) {
	ds := Dataset{Name: name}
	seen := map[string]bool{}
	for i, r := range recs {
		var q struct {
			QueryID  any        `json:"query_id"`
			Query    string     `json:"query"`
			APIs     []stbAPI   `json:"api_list"`
			Relevant [][]string `json:"relevant APIs"`
		}
		if err := json.Unmarshal(r, &q); err != nil {
			return ds, fmt.Errorf("record %d: %w", i+1, err)
		}
		for _, a := range q.APIs {
			id := APIID(a.Tool, a.API)
			if seen[id] {
				continue
			}
			seen[id] = true
			d := embeddings.Doc{ID: id, Name: a.API, Description: a.Description, Group: a.Tool}
			for _, p := range append(a.Required, a.Optional...) {
				d.Params = append(d.Params, embeddings.Param{Name: p.Name, Description: p.Description})
			}
			extra := []string{a.Category}
			extra = append(extra, templateKeys(a.Template)...)
			d.Extra = strings.Join(extra, " ")
			ds.Docs = append(ds.Docs, d)
		}
		var gold []string
		for _, rel := range q.Relevant {
			if len(rel) >= 2 {
				gold = append(gold, APIID(rel[0], rel[1]))
			}
		}
		if len(gold) == 0 || q.Query == "" {
			continue
		}
		ds.Queries = append(ds.Queries, Query{ID: fmt.Sprint(q.QueryID), Text: q.Query, Gold: gold})
	}
	return ds, nil
}

// templateKeys lists the field names of an example response, depth first,
// without duplicates: they name what the endpoint returns.
func templateKeys(raw json.RawMessage) []string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// addBFCL pools a BFCL file's functions (first definition of each name
// wins) and adds its questions that have a ground truth; gold = the
// function names of the expected calls.
func addBFCL(ds *Dataset, seen map[string]bool, recs []json.RawMessage) error {
	for i, r := range recs {
		var q struct {
			ID       string `json:"id"`
			Question [][]struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"question"`
			Function []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
			GroundTruth json.RawMessage `json:"ground_truth"`
		}
		if err := json.Unmarshal(r, &q); err != nil {
			return fmt.Errorf("record %d: %w", i+1, err)
		}
		for _, f := range q.Function {
			if seen[f.Name] {
				continue
			}
			seen[f.Name] = true
			ds.Docs = append(ds.Docs, embeddings.Doc{ID: f.Name, Name: f.Name, Description: f.Description,
				Params: embeddings.ParamsFromSchema(f.Parameters)})
		}
		var calls []map[string]json.RawMessage
		if len(q.GroundTruth) == 0 || json.Unmarshal(q.GroundTruth, &calls) != nil {
			continue // null (irrelevance) or not a list of calls
		}
		goldSet := map[string]bool{}
		var gold []string
		for _, c := range calls {
			for name := range c {
				if !goldSet[name] {
					goldSet[name] = true
					gold = append(gold, name)
				}
			}
		}
		sort.Strings(gold)
		var text []string
		for _, turn := range q.Question {
			for _, m := range turn {
				if m.Role == "user" {
					text = append(text, m.Content)
				}
			}
		}
		if len(gold) == 0 || len(text) == 0 {
			continue
		}
		ds.Queries = append(ds.Queries, Query{ID: q.ID, Text: strings.Join(text, "\n"), Gold: gold})
	}
	return nil
}
