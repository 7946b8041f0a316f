package selector_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// longText is a request of about n bytes at the limits /v1/select and
// /v1/plan take by default: "words" is a hostile agent's (random words of
// the actions' vocabulary, as cmd/airs-load fairness sends), "prose" a
// person's long message with sentences, numbers and file names.
func longText(kind string, n int) string {
	r := rand.New(rand.NewPCG(7, 11))
	var sb strings.Builder
	switch kind {
	case "words":
		vocab := []string{"read", "the", "file", "compare", "two", "texts", "summarize", "report", "delete", "old", "logs", "calculate", "sum", "of", "numbers", "and"}
		for sb.Len() < n-12 {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(vocab[r.IntN(len(vocab))])
		}
	default:
		sentences := []string{
			"Could you have a look at the quarterly report in my documents and tell me what changed since last year.",
			"The meeting notes from Tuesday mention that the acme quote went up by 12% to 4,200 dollars.",
			"I am not sure whether we should delete the old drafts before the review, so please do not remove anything yet.",
			"Then compare final.txt with draft.txt and list the differences between them.",
			"What's 15% of 240, and how much is that per month over 12 months?",
			"Also summarize the lease and the budget spreadsheet, the key points only.",
			"If anything in the papers folder looks out of date, tell me which files and why.",
		}
		for sb.Len() < n-120 {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(sentences[r.IntN(len(sentences))])
		}
	}
	return sb.String()
}

// BenchmarkLongText: one selection (8,000 bytes, just under
// http.limits.select_text) and one plan (4,000 bytes, under plan_text)
// over the built-in tools, as /v1/select and /v1/plan run them: the work
// a heavy request holds a core for. cpu-ms/op is the process's CPU per
// operation (the garbage collection it causes included): on a shared
// machine a steadier figure than the wall time.
func BenchmarkLongText(b *testing.B) {
	dir := b.TempDir()
	writeFiles(b, dir, "final.txt", "draft.txt", "meeting-notes.md", "quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "papers/a.pdf")
	s, cat := understoodSelector(b, dir)
	ctx := context.Background()
	for _, kind := range []string{"words", "prose"} {
		sel, plan := longText(kind, 8000), longText(kind, 4000)
		b.Run("select/"+kind, func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				_, _ = s.Select(ctx, "me", sel)
			}
			b.ReportMetric(1000*(processCPU()-cpu0)/float64(b.N), "cpu-ms/op")
		})
		b.Run("plan/"+kind, func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				_, _ = s.Plan(ctx, "me", plan, cat)
			}
			b.ReportMetric(1000*(processCPU()-cpu0)/float64(b.N), "cpu-ms/op")
		})
	}
}
