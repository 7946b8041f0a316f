package grammar

// NoneTool is the function name of the "no tool fits" choice:
// {"function":"none","arguments":{}}.
const NoneTool = "none"

// ToolSchema is one tool: its name and the JSON Schema of its arguments
// (nil or empty means any object).
type ToolSchema struct {
	Name       string
	Parameters []byte
}

// ToolCallOptions control ToolCall.
type ToolCallOptions struct {
	// AllowNone adds the choice {"function":"none","arguments":{}}.
	AllowNone bool
	// Options compile each tool's parameters schema.
	Options Options
}

// ToolCall builds the grammar of {"function":"<name>","arguments":{...}}
// over tools (names must be distinct and not "none" when AllowNone). Each
// tool's compiled automaton is cached by (schema hash, options), so a new
// subset of seen tools costs little.
func ToolCall(tools []ToolSchema, opts ToolCallOptions) (*Grammar, error) { panic("todo") }
