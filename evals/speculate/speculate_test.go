package speculate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCall(t *testing.T) {
	for _, c := range []struct{ in, name, args string }{
		{"cd(folder='document')", "cd", `{"folder":"document"}`},
		{"ls(a=True)", "ls", `{"a":true}`},
		{"pwd()", "pwd", `{}`},
		{`post_tweet(content="it's", tags=['#a', '#b'], mentions=[])`, "post_tweet", `{"content":"it's","mentions":[],"tags":["#a","#b"]}`},
		{"place_order(order_type='Buy',symbol='AAPL',price=150.0,amount=100)", "place_order", `{"amount":100,"order_type":"Buy","price":150.0,"symbol":"AAPL"}`},
		{"f(x=None, d={'k': (1, 2)}, s='a\\'b')", "f", `{"d":{"k":[1,2]},"s":"a'b","x":null}`},
		{"cd('Reports')", "cd", `{"folder":"Reports"}`},
	} {
		got, err := ParseCall(c.in, []string{"folder"})
		if err != nil || got.Name != c.name || string(got.Args) != c.args {
			t.Errorf("%s: %s %s %v, want %s %s", c.in, got.Name, got.Args, err, c.name, c.args)
		}
	}
	for _, bad := range []string{"cd(", "cd(folder=)", "cd(folder='x'", "x", "f(a=1 b=2)", "cd('a', 'b')"} {
		if _, err := ParseCall(bad, []string{"folder"}); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
	if got := ParamOrder(json.RawMessage(`{"type":"dict","properties":{"b":{},"a":{"type":"x"},"c":{}}}`)); strings.Join(got, ",") != "b,a,c" {
		t.Errorf("ParamOrder %v", got)
	}
}

// The replay on the 12 conversations kept in the repository: with
// speculation off nothing is speculated; the oracle, which speculates
// exactly the next call, answers every speculable call from its
// speculation (so the pipeline's cache, TTL and invalidation work as the
// replay assumes) and wastes nothing; AIRS's predictor is between, and
// every figure adds up.
func TestReplay(t *testing.T) {
	var buf bytes.Buffer
	rs, err := Run(context.Background(), Options{Data: "../recommend/testdata/conversations.jsonl.gz",
		Functions: "../recommend/testdata/functions.jsonl.gz", JSON: true}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || strings.Count(buf.String(), "\n") != 3 {
		t.Fatalf("results %+v\n%s", rs, buf.String())
	}
	off, airs, oracle := rs[0], rs[1], rs[2]
	for _, r := range rs {
		if r.Calls == 0 || r.Calls != off.Calls || r.Speculable != off.Speculable || r.ParseErrors != 0 ||
			r.Wasted != r.Speculations-r.Hits || r.Hits > r.Speculable {
			t.Fatalf("%s: %+v", r.Predictor, r)
		}
	}
	if off.Speculations != 0 || off.Hits != 0 {
		t.Fatalf("off speculated: %+v", off)
	}
	if oracle.Hits != oracle.Speculable || oracle.Wasted != 0 || oracle.HitRateSpeculable != 1 || oracle.SavedMs <= 0 {
		t.Fatalf("oracle: %+v", oracle)
	}
	if airs.Speculations == 0 || airs.Hits > oracle.Hits || airs.BySource["recommender"].Speculations == 0 {
		t.Fatalf("airs: %+v", airs)
	}
	if oracle.MeanLatencyMs >= off.MeanLatencyMs {
		t.Fatalf("the oracle's hits saved no latency: %.3f ms vs %.3f ms", oracle.MeanLatencyMs, off.MeanLatencyMs)
	}
	t.Log(buf.String())
}

func dataDir() string {
	if d := os.Getenv("DATA_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "data")
}
