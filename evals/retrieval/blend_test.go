package retrieval

import (
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
