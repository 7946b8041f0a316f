// Package demodata writes the sample documents `make demo` and the
// end-to-end tests work on: real PDFs (two price lists, three short
// research papers) made with a PDF writer, so extraction is tested on
// what real tools produce.
package demodata

import (
	"fmt"
	"os"
	"path/filepath"

	"codeberg.org/go-pdf/fpdf"
)

// WritePDF writes a one-column PDF with one line of text per entry, a new
// page every 40 lines.
func WritePDF(path string, lines []string) error {
	doc := fpdf.New("P", "mm", "A4", "")
	doc.SetFont("Helvetica", "", 11)
	doc.AddPage()
	for i, l := range lines {
		if i > 0 && i%40 == 0 {
			doc.AddPage()
		}
		doc.Cell(0, 6, l)
		doc.Ln(6)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return doc.OutputFileAndClose(path)
}

// PricingA and PricingB are two versions of a price list.
var (
	PricingA = []string{"Acme Cloud price list 2024", "Starter plan: $10 per month", "Pro plan: $25 per month", "Enterprise plan: $99 per month", "Storage: $0.02 per GB"}
	PricingB = []string{"Acme Cloud price list 2025", "Starter plan: $12 per month", "Pro plan: $30 per month", "Enterprise plan: $99 per month", "Storage: $0.03 per GB"}
)

// Papers are short research papers, by file name.
var Papers = map[string][]string{
	"attention.pdf": {
		"Attention Is All You Need.",
		"We propose the Transformer, a network architecture based solely on attention mechanisms.",
		"It dispenses with recurrence and convolutions entirely.",
		"Experiments on two machine translation tasks show the models are superior in quality.",
		"The Transformer is also more parallelizable and requires less time to train.",
	},
	"bm25.pdf": {
		"The Probabilistic Relevance Framework: BM25 and Beyond.",
		"BM25 ranks documents by term frequency, inverse document frequency and document length.",
		"Term frequency saturates, so repeating a word adds less and less to the score.",
		"Length normalization keeps long documents from winning by size alone.",
		"BM25 remains a strong baseline for retrieval after decades of research.",
	},
	"grammars.pdf": {
		"Constrained Decoding with Grammars.",
		"A grammar masks the tokens a language model may emit at each step.",
		"Masks computed over the vocabulary guarantee syntactically valid output.",
		"Precomputing masks per automaton state makes constrained decoding fast.",
		"Schema-derived grammars make tool calls valid by construction.",
	},
}

// Write creates the sample space under dir: quotes/acme-2024.pdf,
// quotes/acme-2025.pdf and papers/*.pdf.
func Write(dir string) error {
	if err := WritePDF(filepath.Join(dir, "quotes", "acme-2024.pdf"), PricingA); err != nil {
		return err
	}
	if err := WritePDF(filepath.Join(dir, "quotes", "acme-2025.pdf"), PricingB); err != nil {
		return err
	}
	for name, lines := range Papers {
		if err := WritePDF(filepath.Join(dir, "papers", name), lines); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
