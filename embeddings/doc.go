package embeddings

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
)

// Doc is what the index knows about one tool: the text it is retrieved by,
// split into fields that are weighted differently, and the metadata that
// filters apply to. The selector builds Docs from the pipeline's registry.
type Doc struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Params      []Param `json:"params,omitempty"`
	// Group names the server, plugin or API the tool belongs to (an MCP
	// server, a RapidAPI tool). Tools of one group share context: the
	// group's text is mixed into each member's score (see Options.GroupWeight).
	Group string `json:"group,omitempty"`
	// Extra is further searchable text (category, tags, response fields).
	Extra string `json:"extra,omitempty"`
	// Trust is the tool's trust level, 0 (community) … 3 (system).
	Trust int `json:"trust"`
	// Capabilities the caller must hold to call the tool, as "Kind(Arg)".
	Capabilities []string `json:"capabilities,omitempty"`
	// Metadata is matched by Filter.Where (equality on every key given).
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Param is one parameter's name and description.
type Param struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Text is the document as one string, the form given to an embedder that
// takes whole texts (Ollama) and to plain BM25: name, description,
// parameters, group and extra text.
func (d *Doc) Text() string {
	var b strings.Builder
	b.WriteString(d.Name)
	if d.Description != "" {
		b.WriteString(": ")
		b.WriteString(d.Description)
	}
	if len(d.Params) > 0 {
		b.WriteString(" Parameters:")
		for _, p := range d.Params {
			b.WriteString(" ")
			b.WriteString(p.Name)
			if p.Description != "" {
				b.WriteString(" (")
				b.WriteString(p.Description)
				b.WriteString(")")
			}
		}
		b.WriteString(".")
	}
	if d.Group != "" {
		b.WriteString(" Group: ")
		b.WriteString(d.Group)
		b.WriteString(".")
	}
	if d.Extra != "" {
		b.WriteString(" ")
		b.WriteString(d.Extra)
	}
	return b.String()
}

// Hash is the content hash that decides whether a tool must be re-embedded:
// every field that reaches an embedding or a filter.
func (d *Doc) Hash() string {
	b, _ := json.Marshal(d) // map keys are marshalled in sorted order
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// ParamsFromSchema lists the top-level properties of a JSON Schema object
// (any dialect: BFCL's "dict", MCP's inputSchema) as Params, sorted by name.
func ParamsFromSchema(schema json.RawMessage) []Param {
	if len(schema) == 0 {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]Param, 0, len(s.Properties))
	for name, p := range s.Properties {
		out = append(out, Param{Name: name, Description: p.Description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
