package embeddings_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/airs-dev/airs/embeddings"
)

// Tools are indexed by their descriptions and found by a request's words:
// dense (here the built-in Lexical embedder, which needs no model server)
// and BM25, fused. A filter drops what the caller may not call before
// anything is ranked.
func Example() {
	ctx := context.Background()
	ix, err := embeddings.Open(ctx, embeddings.NewLexical(embeddings.LexicalOptions{}), embeddings.Options{}) // no Dir: in memory
	if err != nil {
		fmt.Println(err)
		return
	}
	docs := []embeddings.Doc{
		{ID: "pdf-extract", Name: "pdf-extract", Description: "Extract the text of a PDF document.",
			Params: []embeddings.Param{{Name: "path", Description: "the PDF file"}}, Trust: 3},
		{ID: "weather", Name: "weather", Description: "Current weather and forecast for a city.",
			Params: []embeddings.Param{{Name: "city"}}, Trust: 1},
		{ID: "send-email", Name: "send-email", Description: "Send an email message to a recipient.",
			Params: []embeddings.Param{{Name: "to"}, {Name: "body"}}, Trust: 2, Capabilities: []string{"Network(smtp)"}},
	}
	if _, err := ix.Sync(ctx, docs); err != nil {
		fmt.Println(err)
		return
	}
	for _, q := range []string{"what is the forecast in Lyon", "get the text out of invoice.pdf", "email the report to Ada"} {
		hits, err := ix.Search(ctx, q, 1, embeddings.Filter{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-32s -> %s\n", q, hits[0].ID)
	}
	// A caller without Network(smtp) is never offered send-email.
	hits, _ := ix.Search(ctx, "email the report to Ada", 3, embeddings.Filter{CheckCapabilities: true})
	var offered []string
	for _, h := range hits {
		offered = append(offered, h.ID)
	}
	slices.Sort(offered)
	fmt.Println("without Network(smtp):", offered)
	// Output:
	// what is the forecast in Lyon     -> weather
	// get the text out of invoice.pdf  -> pdf-extract
	// email the report to Ada          -> send-email
	// without Network(smtp): [pdf-extract weather]
}
