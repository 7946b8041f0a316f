package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/demodata"
)

func do(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, url, b)
	}
	return resp.StatusCode, v
}

func recList(v map[string]any) []map[string]any {
	var out []map[string]any
	l, _ := v["recommendations"].([]any)
	for _, x := range l {
		out = append(out, x.(map[string]any))
	}
	return out
}

// The HTTP surface over the real engine and watcher: a PDF landing in the
// space reaches the stream and the list; accept runs it through the
// pipeline; an agent without the space never sees it; dismiss, PUT
// /v1/context and the errors.
func TestServedRecommendations(t *testing.T) {
	base, cfg, _ := newServedEngine(t, true)

	req, _ := http.NewRequest("GET", base+"/v1/recommendations/stream", nil)
	req.Header.Set("Authorization", "Bearer t-web")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream content type %q", ct)
	}
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		ev := ""
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				ev = e
			}
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- [2]string{ev, d}
			}
		}
		close(events)
	}()
	if e := <-events; e[0] != "snapshot" {
		t.Fatalf("first event %v", e)
	}

	start := time.Now()
	if err := demodata.WritePDF(filepath.Join(cfg.Spaces["documents"], "new-invoice.pdf"), []string{"Invoice 7", "Total 99"}); err != nil {
		t.Fatal(err)
	}
	var id string
	timeout := time.After(2 * time.Second)
wait:
	for {
		select {
		case e := <-events:
			if e[0] == "new" && strings.Contains(e[1], `"tool":"pdf-extract"`) && strings.Contains(e[1], "new-invoice.pdf") {
				var rec map[string]any
				_ = json.Unmarshal([]byte(e[1]), &rec)
				id = rec["id"].(string)
				break wait
			}
		case <-timeout:
			t.Fatal("no pdf-extract recommendation on the stream within 2 s of the file landing")
		}
	}
	t.Logf("file → recommendation on the stream: %v", time.Since(start))

	code, v := do(t, "GET", base+"/v1/recommendations", "t-nobody", "")
	if code != 200 || len(recList(v)) != 0 {
		t.Fatalf("an agent without ReadSpace(documents) sees %d %v", code, v)
	}
	code, v = do(t, "POST", base+"/v1/recommendations/"+id+"/accept", "t-web", "")
	if code != 200 || v["ran"] != true {
		t.Fatalf("accept: %d %v", code, v)
	}
	res := v["result"].(map[string]any)
	if res["outcome"] != "ok" || !strings.Contains(string(mustJSON(res["output"])), "Invoice 7") {
		t.Fatalf("accepted call's result %v", res)
	}
	code, v = do(t, "POST", base+"/v1/recommendations/"+id+"/accept", "t-web", "")
	if code != 404 || v["error"] != "recommendation_not_found" || v["hint"] == nil {
		t.Fatalf("second accept: %d %v", code, v)
	}

	code, v = do(t, "PUT", base+"/v1/context", "t-web", `{"task":"list the files in documents"}`)
	if code != 200 {
		t.Fatalf("PUT /v1/context: %d %v", code, v)
	}
	var listID string
	for _, r := range recList(v) {
		if r["tool"] == "list-files" {
			listID = r["id"].(string)
		}
	}
	if listID == "" {
		t.Fatalf("the task brought no list-files: %v", v)
	}
	code, v = do(t, "POST", base+"/v1/recommendations/"+listID+"/dismiss", "t-web", "")
	if code != 200 || v["dismissed"] != listID {
		t.Fatalf("dismiss: %d %v", code, v)
	}
	code, v = do(t, "PUT", base+"/v1/context", "t-web", `{}`)
	if code != 400 || v["error"] != "bad_request" {
		t.Fatalf("empty context: %d %v", code, v)
	}
	code, v = do(t, "PUT", base+"/v1/context", "t-nobody", `{"files":[{"space":"documents","path":"attention.pdf"}]}`)
	if code != 403 {
		t.Fatalf("a file in a space the agent cannot read: %d %v", code, v)
	}
	code, _ = do(t, "GET", base+"/v1/recommendations", "wrong-token", "")
	if code != 401 {
		t.Fatalf("bad token: %d", code)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
