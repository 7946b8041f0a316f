package httpapi

import (
	"slices"
	"testing"
)

// An agent sees the breakers of the tools it may call only, and its task.
func TestUIBackendBreakersAndTask(t *testing.T) {
	_, _, e := newServedEngine(t, false)
	b := recBackend{backend{e}}
	tools := func(caller string) []string {
		var out []string
		for _, tb := range b.Breakers(caller) {
			if tb.State != "closed" {
				t.Errorf("%s: a fresh breaker %+v", caller, tb)
			}
			out = append(out, tb.Tool)
		}
		return out
	}
	web, nobody := tools("web"), tools("nobody")
	if !slices.Contains(web, "pdf-extract") || !slices.Contains(web, "calculator") {
		t.Fatalf("web's breakers %v", web)
	}
	if slices.Contains(nobody, "pdf-extract") || slices.Contains(nobody, "list-files") || !slices.Contains(nobody, "calculator") {
		t.Fatalf("nobody's breakers %v: want the tools it may call only", nobody)
	}
	if err := e.Recommender().SetTask("web", "compare the quotes"); err != nil {
		t.Fatal(err)
	}
	if b.Task("web") != "compare the quotes" || b.Task("nobody") != "" {
		t.Fatalf("tasks %q %q", b.Task("web"), b.Task("nobody"))
	}
}
