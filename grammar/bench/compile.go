package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/grammar/export"
)

const compileUsage = `usage: airs grammar compile [SCHEMA.json] [--tools TOOLS.json [--allow-none]] [--export gbnf|json-schema] [--lenient] [--strict] [--declared-order]

Compiles a JSON Schema (or, with --tools, the tool-call grammar over a set of
tools) and reports its size and compile time; with --export prints it as GBNF
(llama.cpp) or as a JSON Schema for Ollama's "format" field, with what the
export had to loosen on stderr.

TOOLS.json: a JSON array (or {"tools":[...]}) of {"name","parameters"},
OpenAI-style {"type":"function","function":{"name","parameters"}} or MCP-style
{"name","inputSchema"} objects.
`

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

// CompileMain is `airs grammar compile`.
func CompileMain(argv []string, stdout, stderr io.Writer) int {
	a, err := parseArgs(argv, nil, map[string]bool{"lenient": true, "strict": true, "declared-order": true, "allow-none": true})
	if err == nil {
		err = a.check("tools", "export", "lenient", "strict", "declared-order", "allow-none")
	}
	if err == errHelp {
		fmt.Fprint(stdout, compileUsage)
		return 0
	}
	if err == nil && (len(a.pos) > 1 || (len(a.pos) == 0) == (a.str("tools", "") == "")) {
		err = fmt.Errorf("give one SCHEMA.json or --tools TOOLS.json")
	}
	exp := ""
	if err == nil { // a is nil after a parse error
		exp = a.str("export", "")
	}
	if err == nil && exp != "" && exp != "gbnf" && exp != "json-schema" {
		err = fmt.Errorf("--export %q: want gbnf or json-schema", exp)
	}
	if err != nil {
		// One line and a hint: the whole usage would bury the mistake.
		fmt.Fprintf(stderr, "compile: %v\nRun 'airs grammar compile --help' for its flags.\n", err)
		return 2
	}
	opts := grammarOptions(a)
	var schema []byte
	var tools []export.Tool
	if p := a.str("tools", ""); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "compile: %v\n", err)
			return 1
		}
		if tools, err = ReadTools(b); err != nil {
			fmt.Fprintf(stderr, "compile: %s: %v\n", p, err)
			return 1
		}
	} else {
		if schema, err = os.ReadFile(a.pos[0]); err != nil {
			fmt.Fprintf(stderr, "compile: %v\n", err)
			return 1
		}
	}
	allowNone := a.bool("allow-none")
	var loose []export.Loosening
	switch exp {
	case "json-schema":
		var out []byte
		if tools != nil {
			out, loose, err = export.ToolCallFormat(tools, allowNone)
		} else {
			out, loose, err = export.OllamaFormat(schema)
		}
		if err == nil {
			var b bytes.Buffer
			if json.Indent(&b, out, "", "  ") == nil {
				out = b.Bytes()
			}
			fmt.Fprintf(stdout, "%s\n", out)
		}
	case "gbnf":
		var out string
		if tools != nil {
			out, loose, err = export.ToolCallGBNF(tools, allowNone, export.GBNFOptions{})
		} else {
			out, loose, err = export.GBNF(schema)
		}
		if err == nil {
			fmt.Fprint(stdout, out)
		}
	default:
		t0 := time.Now()
		var g *grammar.Grammar
		func() {
			defer func() {
				if e := recover(); e != nil {
					err = fmt.Errorf("grammar engine panicked: %v", e)
				}
			}()
			if tools != nil {
				ts := make([]grammar.ToolSchema, len(tools))
				for i, t := range tools {
					ts[i] = grammar.ToolSchema{Name: t.Name, Parameters: t.Parameters}
				}
				g, err = grammar.ToolCall(ts, grammar.ToolCallOptions{AllowNone: allowNone, Options: opts})
				if err == nil {
					// a request waits for the lowering and the root; a
					// tool's automata are built once its name is chosen
					lowered := time.Since(t0)
					t1 := time.Now()
					if err = g.Build(); err == nil {
						fmt.Fprintf(stdout, "compiled in %.3f ms (%d tools lowered, root built; each tool's automata wait for its name): all tools built in %.3f ms more\n", ms(lowered), len(ts), ms(time.Since(t1)))
					}
				}
			} else {
				g, err = grammar.Compile(schema, opts)
			}
		}()
		if err == nil {
			if tools == nil {
				fmt.Fprintf(stdout, "compiled in %.3f ms: %s\n", ms(time.Since(t0)), g.Stats())
			} else {
				fmt.Fprintf(stdout, "%s\n", g.Stats())
			}
			loose = g.Loosened
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "compile: %v\n", err)
		return 1
	}
	for _, l := range loose {
		fmt.Fprintf(stderr, "loosened: %s at %q: %s\n", l.Keyword, l.Pointer, l.Msg)
	}
	return 0
}
