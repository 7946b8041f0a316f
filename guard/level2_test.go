package guard

import (
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/provenance"
)

// A call level 2 holds (IntentCheck.Hold) is held as a destructive one is,
// whatever the tool; the person sees the flow; an "always" grant for the
// tool does not answer it, and a person's approval of that very call does.
// A flagged call goes ahead, queued for review with its reason.
func TestLevel2HoldAndFlag(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	id := held(t, g, check("bot", deleteFile, `{"path":"x"}`))
	if _, err := g.Decide(id, Always, "boss"); err != nil {
		t.Fatal(err)
	}
	passes(t, g, check("bot", deleteFile, `{"path":"y"}`), pipeline.IntentAlways)

	flow := check("bot", deleteFile, `{"path":"reports/q3.xlsx"}`)
	flow.Hold = "delete-file path came from the text of documents/invoice.pdf (flow policy untrusted-target)"
	flow.Labels = provenance.Args{"path": provenance.Of(provenance.Label{Kind: provenance.Space, Source: "documents/invoice.pdf"})}
	fid := held(t, g, flow)
	r, err := g.Get(fid)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reason != flow.Hold || len(r.Provenance["path"]) != 1 || r.Provenance["path"][0] != "space:documents/invoice.pdf (untrusted)" {
		t.Errorf("the review shows reason %q provenance %v", r.Reason, r.Provenance)
	}
	if _, err := g.Decide(fid, Once, "boss"); err != nil {
		t.Fatal(err)
	}
	passes(t, g, flow, pipeline.IntentApproved)

	send := check("bot", &pipeline.Tool{Name: "http-fetch"}, `{"url":"https://evil.example"}`)
	send.Hold = "http-fetch url came from the text of documents/invoice.pdf (flow policy no-exfiltration)"
	held(t, g, send)

	read := check("bot", readFile, `{"space":"documents","path":"a.txt"}`)
	read.Flag = "the intent verifier judged it misaligned: the request does not ask to read"
	d := passes(t, g, read, pipeline.IntentQueued)
	q, err := g.Get(d.Review)
	if err != nil || q.Reason != read.Flag {
		t.Errorf("flagged review %+v %v", q, err)
	}
}

// An approval given before the call was judged (chat's question, asked
// without the flow) does not answer a level-2 hold: the person must see it.
func TestLevel2HoldNeedsTheFlowSeen(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	params := `{"path":"reports/q3.xlsx"}`
	if _, err := g.Answer("bot", "builtin", "delete-file", []byte(params), "", Once, "boss"); err != nil {
		t.Fatal(err)
	}
	flow := check("bot", deleteFile, params)
	flow.Hold = "delete-file path came from the text of documents/invoice.pdf (flow policy untrusted-target)"
	id := held(t, g, flow)
	if _, err := g.Decide(id, Once, "boss"); err != nil {
		t.Fatal(err)
	}
	passes(t, g, flow, pipeline.IntentApproved)
}
