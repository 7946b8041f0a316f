package selector

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// TestCatalogView: a catalog that returns the same list gets the same view
// (its readers found once); a new list, even of the same tools, a new one;
// the preferred provider of a name is the first listed.
func TestCatalogView(t *testing.T) {
	reader := pipeline.Tool{Name: "read-file", ReadOnly: true,
		Parameters:   json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"The file's path."}},"required":["path"]}`),
		ReturnSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}
	other := pipeline.Tool{Name: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	list := []Entry{{Provider: "a", Tool: reader}, {Provider: "b", Tool: reader}, {Provider: "a", Tool: other}}
	v := viewOf(list)
	if viewOf(list) != v {
		t.Error("the same list got another view")
	}
	if viewWith(v.entries) != v {
		t.Error("the view is not found by its entries")
	}
	if !slices.Equal(v.names, []string{"read-file", "weather"}) || v.entries["read-file"].Provider != "a" {
		t.Errorf("names %v, read-file from %s", v.names, v.entries["read-file"].Provider)
	}
	rs := v.fileReaders()
	if len(rs) != 1 || rs[0].t.Name != "read-file" {
		t.Fatalf("readers: %d", len(rs))
	}
	if &v.fileReaders()[0] != &rs[0] {
		t.Error("the readers were found again")
	}
	if viewOf(slices.Clone(list)) == v {
		t.Error("a new list got the old view")
	}
}
