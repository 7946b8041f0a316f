//go:build e2e

package e2e

// LangChain's JS chat models (e2e/compat/langchain.mjs) over the
// compatible endpoints: with no model, with the tiny model on the real
// Ollama, and with the in-process engine (compat_inproc_test.go).

import (
	"os"
	"strings"
	"testing"
)

func TestCompatLangChainNoModel(t *testing.T) {
	if os.Getenv("AIRS_E2E") != "1" && os.Getenv("AIRS_E2E_COMPAT") != "1" {
		t.Skip("e2e: set AIRS_E2E_COMPAT=1 (or run make e2e) to run LangChain's clients against airs")
	}
	checkLangChain(t, startCompat(t, "none"), true)
}

// TestCompatLangChainTinyModel: ChatOpenAI's forced call and its
// ToolMessage turn, on the tiny model behind Ollama. Each of its
// generations under a grammar costs Ollama a pass over the whole
// vocabulary per token, so the rest of the scenarios run against the
// in-process engine (TestCompatClientsInProcess), where they are cheap.
func TestCompatLangChainTinyModel(t *testing.T) {
	_, model := setup(t) // the real Ollama with the tiny model (scripts/e2e.sh)
	e := startCompat(t, model)
	e.maxTokens = tinyMaxTokens
	checkLangChain(t, e, false, "lc_openai_continue", "lc_openai_bad_key")
}

// checkLangChain runs langchain.mjs's scenarios (all when none is named:
// LangChain's ChatOpenAI and ChatOllama with the 50 tools bound) against
// e's server: every call is schema-valid and names a bound tool, the
// streamed chunks concatenate to the same calls, a ToolMessage continues
// the conversation, a tool_choice by name is honoured and a bad key is
// LangChain's authentication error. right: the call must also be the
// right one (AIRS's own choice with no model; a random model's calls are
// only checked valid).
func checkLangChain(t *testing.T, e *compatEnv, right bool, scenarios ...string) {
	t.Helper()
	out := e.runProgram(t, "langchain.mjs", scenarios...)
	if len(scenarios) == 0 && len(out) < 7 {
		t.Errorf("langchain.mjs ran %d scenarios, want 7: %v", len(out), out)
	}
	for name, o := range out {
		e.valid(t, name, o.Calls)
		e.valid(t, name+" (first)", firstCalls(t, o))
		t.Logf("%s: calls %s, first %s, content %.120q, status %d %s", name, callsText(o.Calls), o.First, deref(o.Content), o.Status, o.Code)
	}
	isWeatherParis := func(calls []clientCall) bool {
		return len(calls) == 1 && calls[0].Name == "get_weather" && strings.Contains(calls[0].args(), `"city":"Paris"`)
	}
	call, ok := out["lc_openai_call"]
	if ok && right && !isWeatherParis(call.Calls) {
		t.Errorf("lc_openai_call: %+v, want one call of get_weather for Paris", call)
	}
	if s, ok := out["lc_openai_stream"]; ok && !sameCalls(s.Calls, call.Calls) {
		t.Errorf("lc_openai_stream: %+v, not the call %+v", s.Calls, call.Calls)
	}
	if o, ok := out["lc_openai_named"]; ok && (len(o.Calls) != 1 || o.Calls[0].Name != "get_time_zone") {
		t.Errorf("lc_openai_named: %+v, want one call of get_time_zone", o)
	}
	if c, ok := out["lc_openai_continue"]; ok {
		first := firstCalls(t, c)
		switch {
		case len(first) != 1 || first[0].ID == "":
			t.Errorf("lc_openai_continue: tool_choice any gave %+v, want one call with an id", first)
		case right && (!isWeatherParis(first) || len(c.Calls) != 0 || !strings.Contains(deref(c.Content), "sunny")):
			t.Errorf("lc_openai_continue: after the ToolMessage %+v, want an answer with the result (sunny)", c)
		case deref(c.Content) == "" && len(c.Calls) == 0:
			t.Errorf("lc_openai_continue: after the ToolMessage, neither an answer nor a call: %+v", c)
		}
	}
	if o, ok := out["lc_openai_bad_key"]; ok && (!o.Raised || o.Status != 401 || o.Code != "MODEL_AUTHENTICATION") {
		t.Errorf("lc_openai_bad_key: %+v, want LangChain's authentication error (401, MODEL_AUTHENTICATION)", o)
	}
	if oc, ok := out["lc_ollama_call"]; ok && right && !isWeatherParis(oc.Calls) {
		t.Errorf("lc_ollama_call: %+v, want one call of get_weather for Paris", oc)
	}
	if o, ok := out["lc_ollama_continue"]; ok && right && (len(o.Calls) != 0 || !strings.Contains(deref(o.Content), "get_weather returned") || !strings.Contains(deref(o.Content), "sunny")) {
		t.Errorf("lc_ollama_continue: %+v, want an answer with get_weather's result (sunny)", o)
	}
}
