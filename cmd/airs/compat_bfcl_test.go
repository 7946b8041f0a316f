package main

// BFCL's multiple and irrelevance categories sent through the
// OpenAI-compatible endpoint by the official openai npm client, scored by
// the same checker as `airs eval bfcl --model none`, against that eval's
// own predictor in the same run: the endpoint must lose nothing. It needs
// the data and npm:
//
//	AIRS_E2E_COMPAT=1 DATA_DIR=../shared/data go test -count=1 -run TestCompatBFCL -v ./cmd/airs/

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/evals/predict"
	"github.com/airs-dev/airs/server"
	"github.com/airs-dev/airs/server/compat"
	"github.com/airs-dev/airs/server/compat/complete"
)

// admitAll is the server.Backend beside the compat endpoints: only Admit
// is reached (no rate limit in a measurement).
type admitAll struct{ server.Backend }

func (admitAll) Admit(string) error { return nil }

func TestCompatBFCL(t *testing.T) {
	if os.Getenv("AIRS_E2E_COMPAT") != "1" || os.Getenv("DATA_DIR") == "" {
		t.Skip("set AIRS_E2E_COMPAT=1 and DATA_DIR (BFCL's data in DATA_DIR/bfcl) to measure BFCL through the OpenAI endpoint")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm: the official openai client is an npm package")
	}
	dir := filepath.Join(os.Getenv("DATA_DIR"), "bfcl")
	cats := []string{"multiple", "irrelevance"}
	ctx := context.Background()
	pool, err := predict.PoolTexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The endpoint as the eval runs AIRS: the same pool and threshold.
	cb, err := complete.New(ctx, complete.Options{Pool: pool, MinSimilarity: predict.DefaultMinSimilarity})
	if err != nil {
		t.Fatal(err)
	}
	const token = "bfcl-token"
	s := server.New(admitAll{}, server.Config{Tokens: []server.Token{{SHA256: server.HashToken(token), Agent: "bfcl"}}})
	compat.Mount(s, cb, compat.Options{})
	ts := httptest.NewServer(s)
	defer ts.Close()

	// The questions as the client sends them.
	work := t.TempDir()
	in, out := filepath.Join(work, "questions.jsonl"), filepath.Join(work, "answers.jsonl")
	var buf bytes.Buffer
	questions := map[string]bfcl.Question{}
	for _, c := range cats {
		path, err := bfcl.FindCategoryFile(dir, c)
		if err != nil {
			t.Fatal(err)
		}
		qs, err := bfcl.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			questions[q.ID] = q
			tools, err := bfcl.ToolSchemas(q)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(map[string]any{"id": q.ID, "text": q.Text(), "tools": tools})
			buf.Write(append(b, '\n'))
		}
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	clients := installCompatClients(t)
	start := time.Now()
	cmd := exec.Command("node", "bfcl.mjs", in, out)
	cmd.Dir = clients
	cmd.Env = append(os.Environ(), "AIRS_URL="+ts.URL, "AIRS_TOKEN="+token, "AIRS_MODEL=none")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node bfcl.mjs: %v\n%s", err, b)
	}
	t.Logf("%d questions through the official client in %v", bytes.Count(buf.Bytes(), []byte("\n")), time.Since(start).Round(time.Millisecond))
	answers := map[string][]bfcl.Call{}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var a struct {
			ID    string
			Error string
			Calls []struct{ Name, Arguments string }
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if a.Error != "" {
			t.Errorf("%s: the client raised %s", a.ID, a.Error)
		}
		calls := []bfcl.Call{}
		for _, c := range a.Calls {
			var args map[string]any
			dec := json.NewDecoder(bytes.NewReader([]byte(c.Arguments)))
			dec.UseNumber()
			if err := dec.Decode(&args); err != nil {
				t.Fatalf("%s: arguments %q: %v", a.ID, c.Arguments, err)
			}
			call, err := bfcl.DecodeCall(mustJSON(map[string]any{"name": c.Name, "arguments": args}))
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, call)
		}
		answers[a.ID] = calls
	}
	viaEndpoint := bfcl.PredictorFunc(func(_ context.Context, q bfcl.Question, _ []bfcl.ToolSchemaJSON) ([]bfcl.Call, error) {
		return answers[q.ID], nil
	})
	eval, err := predict.NewNoLLM(ctx, predict.Options{Pool: pool, MinSimilarity: predict.DefaultMinSimilarity, Parallel: true})
	if err != nil {
		t.Fatal(err)
	}
	evalCalls := map[string][]bfcl.Call{}
	direct := bfcl.PredictorFunc(func(ctx context.Context, q bfcl.Question, tools []bfcl.ToolSchemaJSON) ([]bfcl.Call, error) {
		calls, err := eval.Predict(ctx, q, tools)
		evalCalls[q.ID] = calls
		return calls, err
	})
	got, err := bfcl.Run(ctx, bfcl.Options{DataDir: dir, Categories: cats, Predictor: viaEndpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := bfcl.Run(ctx, bfcl.Options{DataDir: dir, Categories: cats, Predictor: direct}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		g, w := got[i], want[i]
		t.Logf("%s: endpoint function_acc %.4f ast_acc %.4f valid %d/%d; airs eval bfcl --model none function_acc %.4f ast_acc %.4f valid %d/%d",
			g.Category, g.FunctionAcc, g.ASTAcc, g.ValidCalls, g.Calls, w.FunctionAcc, w.ASTAcc, w.ValidCalls, w.Calls)
		// The one difference allowed: the eval scores the no-LLM path's
		// calls as they come, invalid ones included; the endpoint never
		// returns a call that does not validate (it tries the next tool, or
		// answers with no call).
		differ := 0
		for j := range g.ASTRight {
			if g.ASTRight[j] == w.ASTRight[j] && g.FunctionRight[j] == w.FunctionRight[j] {
				continue
			}
			differ++
			id := g.QuestionIDs[j]
			if !hasInvalid(t, questions[id], evalCalls[id]) {
				t.Errorf("%s %s: endpoint right=%v/%v, eval right=%v/%v, and the eval's calls %v are valid",
					g.Category, id, g.FunctionRight[j], g.ASTRight[j], w.FunctionRight[j], w.ASTRight[j], evalCalls[id])
			}
		}
		t.Logf("%s: %d of %d questions scored differently, each one where the eval's call was schema-invalid", g.Category, differ, g.N)
		if g.ValidCalls != g.Calls {
			t.Errorf("%s: %d of the endpoint's %d calls are not schema-valid", g.Category, g.Calls-g.ValidCalls, g.Calls)
		}
	}
}

// hasInvalid reports whether one of calls does not validate against its
// tool's schema (or names no tool of q).
func hasInvalid(t *testing.T, q bfcl.Question, calls []bfcl.Call) bool {
	tools, err := bfcl.ToolSchemas(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		i := slices.IndexFunc(tools, func(s bfcl.ToolSchemaJSON) bool { return s.Name == c.Name })
		if i < 0 {
			return true
		}
		s, err := bfcl.CompileSchema(tools[i].Parameters)
		if err != nil {
			t.Fatal(err)
		}
		if bfcl.ValidateArgs(s, c.Args) != nil {
			return true
		}
	}
	return false
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// installCompatClients installs e2e/compat's pinned npm clients into a
// cache folder (once per version of its package.json) with its programs.
func installCompatClients(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "e2e", "compat")
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(pkg, lock...))
	cache := os.Getenv("AIRS_E2E_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "airs-e2e")
	}
	dir := filepath.Join(cache, "compat-npm", hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644)
		os.WriteFile(filepath.Join(dir, "package-lock.json"), lock, 0o644) // the whole tree, with integrity hashes
		cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install: %v\n%s", err, b)
		}
	}
	for _, name := range []string{"clients.mjs", "bfcl.mjs"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
