package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/grammar/export"
)

// ReadTools reads a tools file in any of the accepted shapes.
func ReadTools(b []byte) ([]export.Tool, error) {
	var wrapped struct {
		Tools []json.RawMessage `json:"tools"`
	}
	var list []json.RawMessage
	if err := json.Unmarshal(b, &list); err != nil {
		if err2 := json.Unmarshal(b, &wrapped); err2 != nil || wrapped.Tools == nil {
			return nil, fmt.Errorf("tools: want a JSON array of tools or {\"tools\":[...]}: %v", err)
		}
		list = wrapped.Tools
	}
	var out []export.Tool
	for i, raw := range list {
		var t struct {
			Name        string          `json:"name"`
			Parameters  json.RawMessage `json:"parameters"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Function    *struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("tools[%d]: %v", i, err)
		}
		tool := export.Tool{Name: t.Name, Parameters: t.Parameters}
		if len(tool.Parameters) == 0 {
			tool.Parameters = t.InputSchema
		}
		if t.Function != nil {
			tool = export.Tool{Name: t.Function.Name, Parameters: t.Function.Parameters}
		}
		if tool.Name == "" {
			return nil, fmt.Errorf("tools[%d]: no name", i)
		}
		out = append(out, tool)
	}
	return out, nil
}

// CompileRequest is one `airs grammar compile`: a schema or a tool set.
type CompileRequest struct {
	Schema []byte        // a JSON Schema, when Tools is nil
	Tools  []export.Tool // the tool-call grammar over these tools
	// Export is "" (compile with the grammar engine), "gbnf" (llama.cpp) or
	// "json-schema" (Ollama's format field).
	Export    string
	AllowNone bool // tools: the model may call none
	Options   grammar.Options
}

// Compiled is what Compile made.
type Compiled struct {
	// Exported is the GBNF or the (indented) JSON Schema when the request
	// asked for an export.
	Exported string
	// Grammar is the compiled grammar otherwise. For a schema, CompileTime
	// is its compile; for tools, the lowering and the root a request waits
	// for, and BuildTime building every tool's automata after it (a tool's
	// automata are built once its name is chosen).
	Grammar                *grammar.Grammar
	CompileTime, BuildTime time.Duration
	// Loosened is what the export or the lenient compile could not enforce.
	Loosened []export.Loosening
}

// Compile compiles or exports req. A panic of the grammar engine is an
// error, so that a bad schema does not take the CLI down without a word.
func Compile(req CompileRequest) (c *Compiled, err error) {
	c = &Compiled{}
	switch req.Export {
	case "json-schema":
		var out []byte
		if req.Tools != nil {
			out, c.Loosened, err = export.ToolCallFormat(req.Tools, req.AllowNone)
		} else {
			out, c.Loosened, err = export.OllamaFormat(req.Schema)
		}
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if json.Indent(&b, out, "", "  ") == nil {
			out = b.Bytes()
		}
		c.Exported = string(out) + "\n"
		return c, nil
	case "gbnf":
		if req.Tools != nil {
			c.Exported, c.Loosened, err = export.ToolCallGBNF(req.Tools, req.AllowNone, export.GBNFOptions{})
		} else {
			c.Exported, c.Loosened, err = export.GBNF(req.Schema)
		}
		if err != nil {
			return nil, err
		}
		return c, nil
	case "":
	default:
		return nil, fmt.Errorf("export %q: want gbnf or json-schema", req.Export)
	}
	defer func() {
		if e := recover(); e != nil {
			c, err = nil, fmt.Errorf("grammar engine panicked: %v", e)
		}
	}()
	t0 := time.Now()
	if req.Tools == nil {
		if c.Grammar, err = grammar.Compile(req.Schema, req.Options); err != nil {
			return nil, err
		}
		c.CompileTime = time.Since(t0)
	} else {
		ts := make([]grammar.ToolSchema, len(req.Tools))
		for i, t := range req.Tools {
			ts[i] = grammar.ToolSchema{Name: t.Name, Parameters: t.Parameters}
		}
		if c.Grammar, err = grammar.ToolCall(ts, grammar.ToolCallOptions{AllowNone: req.AllowNone, Options: req.Options}); err != nil {
			return nil, err
		}
		c.CompileTime = time.Since(t0)
		t1 := time.Now()
		if err = c.Grammar.Build(); err != nil {
			return nil, err
		}
		c.BuildTime = time.Since(t1)
	}
	c.Loosened = c.Grammar.Loosened
	return c, nil
}
