package retrieval

import (
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

func TestEnsembleSpec(t *testing.T) {
	e, err := NewEmbedder("ensemble:lex=0.3,dim=64,dense=1.5,norm=minmax", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := e.(*embeddings.Ensemble).Options()
	if o.LexicalWeight != 0.3 || o.Lexical.Dim != 64 || o.DenseWeight != 1.5 || o.Norm != "minmax" {
		t.Fatalf("options %+v, want lex 0.3, dim 64, dense 1.5, minmax", o)
	}
	d, err := NewEmbedder("ensemble", nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := d.(*embeddings.Ensemble).Options(); o.LexicalWeight != embeddings.DefaultEnsembleLexicalWeight || o.Lexical.Dim != embeddings.DefaultEnsembleLexicalDim || o.DenseWeight != embeddings.DefaultEnsembleDenseWeight {
		t.Fatalf("default options %+v", o)
	}
	for _, bad := range []string{"ensemble:lex=1", "ensemble:lex=0", "ensemble:width=3", "ensemble:dense", "ensemble:norm=log"} {
		if _, err := NewEmbedder(bad, nil, embeddings.LexicalOptions{}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
