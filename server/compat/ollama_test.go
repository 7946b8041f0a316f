package compat

import (
	"encoding/json"
	"testing"
)

// A tool message without tool_name (LangChain's ChatOllama sends none) is
// named by its position after the assistant's calls.
func TestOllamaResultsNamedByPosition(t *testing.T) {
	var o olRequest
	err := json.Unmarshal([]byte(`{"model":"m","messages":[
		{"role":"user","content":"weather in Paris and Rome?"},
		{"role":"assistant","content":"","tool_calls":[
			{"function":{"name":"get_weather","arguments":{"city":"Paris"}}},
			{"function":{"name":"get_time","arguments":{"city":"Rome"}}}]},
		{"role":"tool","content":"sunny"},
		{"role":"tool","content":"noon","tool_name":"clock"},
		{"role":"tool","content":"extra"},
		{"role":"user","content":"and now?"},
		{"role":"tool","content":"stray"}]}`), &o)
	if err != nil {
		t.Fatal(err)
	}
	req, err := o.toRequest()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			names = append(names, m.Name)
		}
	}
	want := []string{"get_weather", "clock", "", ""}
	if len(names) != len(want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("tool message %d named %q, want %q (all: %q)", i, names[i], want[i], names)
		}
	}
}
