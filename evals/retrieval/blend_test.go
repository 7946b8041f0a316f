package retrieval

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

func TestBlendSpec(t *testing.T) {
	e, err := NewEmbedder("blend:words=0.4,dense=1.5,group=0.8,name=6,norm=minmax", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := e.(*embeddings.Blend)
	o := b.Options()
	if o.WordWeight != 0.4 || o.DenseWeight != 1.5 || o.Norm != "minmax" || o.LexicalWeight != 0 {
		t.Fatalf("options %+v, want words 0.4, dense 1.5, minmax, no lexical part", o)
	}
	if f := b.Fusion(); f.Dense != 1.5 || f.Group != 0.8 || f.Name != 6 || f.Norm != "minmax" {
		t.Fatalf("fusion %+v", f)
	}
	d, err := NewEmbedder("blend", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := d.(*embeddings.Blend).Options(); o.WordWeight != embeddings.DefaultBlendWordWeight || o.DenseWeight != embeddings.DefaultBlendDenseWeight || o.Words.Map == nil {
		t.Fatalf("default options %+v: want the defaults and the committed word map", o)
	}
	if d.Dim() != 228 {
		t.Fatalf("default blend width %d, want 128 + 100", d.Dim())
	}
	raw, err := NewEmbedder("blend:raw=1", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if raw.ID() == d.ID() {
		t.Fatal("blend:raw=1 must not share the mapped blend's ID")
	}
	w, err := NewEmbedder("words:sif=0.0001,common=2", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := w.(*embeddings.WordVectors).Options(); o.SIF != 0.0001 || o.Common != 2 {
		t.Fatalf("words options %+v", o)
	}
	for _, bad := range []string{"blend:words=1", "blend:words=0", "blend:width=3", "blend:dense", "blend:words=0.6,lex=0.5", "blend:map=/nonexistent", "words:a=1"} {
		if _, err := NewEmbedder(bad, nil, embeddings.LexicalOptions{}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestBlendPartsSpec: parts, dparts and gparts reach the index the blend
// is opened with (embeddings.PartsAdvisor); a spec without them gives the
// plain blend.
func TestBlendPartsSpec(t *testing.T) {
	e, err := NewEmbedder("blend:dparts=2,gparts=0", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pa, ok := e.(embeddings.PartsAdvisor)
	if !ok {
		t.Fatalf("%T carries no parts options", e)
	}
	if p := pa.Parts(); p.DenseParts != 2 || p.GroupParts >= 0 || p.Off {
		t.Fatalf("parts %+v, want DenseParts 2, GroupParts off (negative)", p)
	}
	if _, ok := e.(embeddings.DocBiaser); !ok {
		t.Fatal("the blend with parts options lost its hubness correction")
	}
	off, err := NewEmbedder("blend:parts=0", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !off.(embeddings.PartsAdvisor).Parts().Off {
		t.Fatal("blend:parts=0 does not search whole")
	}
	// The index takes them: with parts=0 a long request is searched as
	// the index searches it with Parts.Off.
	ctx := context.Background()
	docs := []embeddings.Doc{
		{ID: "w/forecast", Name: "get_forecast", Description: "Weather forecast for a city.", Group: "w"},
		{ID: "u/convert", Name: "convert_temperature", Description: "Convert a temperature between Fahrenheit and Celsius.", Group: "u"},
		{ID: "p/restaurants", Name: "find_restaurants", Description: "Find vegetarian restaurants near a place.", Group: "p"},
		{ID: "b/record", Name: "get_record", Description: "Get the owner and status of an account record for the weekend market.", Group: "b"},
	}
	long := "Please find the current weather forecast for Seattle this weekend, with the latest details. " +
		"Then convert the temperatures from Fahrenheit to Celsius for my friends. " +
		"After that, look up a few vegetarian restaurants near Pike Place Market that take reservations."
	rank := func(emb embeddings.Embedder, o embeddings.Options) []string {
		a, err := NewAIRS(ctx, docs, emb, o)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := a.ix.Search(ctx, long, 4, embeddings.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprintf("%s %.6f", h.ID, h.Fused))
		}
		return out
	}
	plain, err := NewEmbedder("blend", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whole := rank(plain, embeddings.Options{Parts: embeddings.PartsOptions{Off: true}})
	if got := rank(off, embeddings.Options{}); !slices.Equal(got, whole) {
		t.Errorf("blend:parts=0 ranks %q, the index with Parts.Off %q", got, whole)
	}
	if got := rank(plain, embeddings.Options{}); slices.Equal(got, whole) {
		t.Errorf("the default blend searched the long request whole: %q", got)
	}
	if _, err := NewEmbedder("blend:dparts", nil, embeddings.LexicalOptions{}); err == nil {
		t.Error("blend:dparts accepted without a number")
	}
}
