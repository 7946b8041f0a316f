package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func rec(i int) *Record {
	return &Record{Time: time.Unix(1700000000, int64(i)), CallID: fmt.Sprintf("c%d", i), Caller: "alice",
		Provider: "p", Tool: "echo", ParamsSHA256: strings.Repeat("ab", 32), Outcome: "ok", LatencyNs: int64(i)}
}

func writeN(t *testing.T, path string, n int) {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := l.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAppendVerifyTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeN(t, path, 10)
	writeN(t, path, 5) // reopen continues the chain
	rep, err := Verify(path)
	if err != nil || !rep.OK() || rep.Records != 15 || rep.LastSeq != 15 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	tail, err := Tail(path, 3)
	if err != nil || len(tail) != 3 {
		t.Fatalf("tail: %v %v", tail, err)
	}
	if tail[0].Seq != 13 || tail[2].Seq != 15 || tail[2].CallID != "c5" {
		t.Fatalf("tail order: %+v", tail)
	}
	all, _ := Tail(path, 100)
	if len(all) != 15 || all[0].Prev != Genesis {
		t.Fatalf("tail all: %d records, first prev %q", len(all), all[0].Prev)
	}
}

func TestRecordEncodingIsJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := Open(path)
	r := rec(1)
	r.CallID = "we\"ird\n\x01\\ \xff ünï"
	r.Error = "timeout"
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got, err := Tail(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].CallID != "we\"ird\n\x01\\ \ufffd ünï" || got[0].Error != "timeout" || got[0].Outcome != "ok" {
		t.Fatalf("round trip: %+v", got[0])
	}
	if !got[0].Time.Equal(r.Time) {
		t.Fatalf("time %v != %v", got[0].Time, r.Time)
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(lines []string) []string
		line   int
	}{
		{"edit", func(ls []string) []string { ls[3] = strings.Replace(ls[3], `"ok"`, `"error"`, 1); return ls }, 5},
		{"delete", func(ls []string) []string { return append(ls[:4:4], ls[5:]...) }, 5},
		{"swap", func(ls []string) []string { ls[2], ls[3] = ls[3], ls[2]; return ls }, 3},
		{"garbage", func(ls []string) []string { ls[6] = "{not json"; return ls }, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeN(t, path, 10)
			b, _ := os.ReadFile(path)
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			lines = tc.mutate(lines)
			os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
			rep, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || rep.Break.Line != tc.line {
				t.Fatalf("want break at line %d, got %+v", tc.line, rep.Break)
			}
		})
	}
}

func TestTornTailRecovered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeN(t, path, 4)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":5,"prev":"abc","ti`) // a write cut short by a crash
	f.Close()
	rep, _ := Verify(path)
	if !rep.OK() || rep.TornTail == 0 || rep.Records != 4 {
		t.Fatalf("verify before recovery: %+v", rep)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Recovered() != rep.TornTail {
		t.Fatalf("recovered %d bytes, want %d", l.Recovered(), rep.TornTail)
	}
	if err := l.Append(rec(5)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	rep, _ = Verify(path)
	if !rep.OK() || rep.Records != 5 || rep.TornTail != 0 {
		t.Fatalf("verify after recovery: %+v", rep)
	}
}

func TestOpenRefusesCorruptLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeN(t, path, 2)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("garbage\n")
	f.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
}

// Two Logs on one file (as `airs serve` and an `airs call` process have)
// interleave their batches into one chain: each re-reads the tail the other
// extended. Without the re-read, both would continue from their own last
// seq and fork the chain.
func TestTwoWritersShareOneChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeN(t, path, 3)
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path)
	if err != nil {
		t.Fatalf("a second writer must be able to open the log: %v", err)
	}
	defer b.Close()
	var want uint64 = 3
	for i := range 20 {
		l := a
		if i%3 != 0 {
			l = b
		}
		r := rec(i)
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		want++
		if r.Seq != want {
			t.Fatalf("append %d got seq %d, want %d", i, r.Seq, want)
		}
	}
	if a.Rereads() == 0 || b.Rereads() == 0 {
		t.Errorf("rereads a=%d b=%d: each writer should have found the other's records", a.Rereads(), b.Rereads())
	}
	rep, err := Verify(path)
	if err != nil || !rep.OK() || rep.Records != 23 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// A writer that died in the middle of its write leaves a torn line; the
// next writer to take the lock — not only the next Open — cuts it before
// linking its own records.
func TestTornTailRepairedUnderLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(rec(1)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	torn := `{"seq":2,"prev":"abc","time":"2026-`
	f.WriteString(torn)
	f.Close()
	r := rec(2)
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	if r.Seq != 2 || l.Recovered() != int64(len(torn)) {
		t.Fatalf("seq %d, recovered %d bytes: want seq 2 and the %d torn bytes cut", r.Seq, l.Recovered(), len(torn))
	}
	rep, err := Verify(path)
	if err != nil || !rep.OK() || rep.Records != 2 || rep.TornTail != 0 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

func TestConcurrentAppendsGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := Open(path)
	var wg sync.WaitGroup
	seqs := make([]uint64, 2000)
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(seqs); i += 50 {
				r := rec(i)
				if err := l.Append(r); err != nil {
					t.Error(err)
					return
				}
				seqs[i] = r.Seq
			}
		}()
	}
	wg.Wait()
	l.Close()
	if err := l.Append(rec(0)); err != ErrClosed {
		t.Fatalf("append after close: %v", err)
	}
	seen := map[uint64]bool{}
	for _, s := range seqs {
		if s == 0 || seen[s] {
			t.Fatalf("seq %d missing or duplicated", s)
		}
		seen[s] = true
	}
	rep, _ := Verify(path)
	if !rep.OK() || rep.Records != len(seqs) {
		t.Fatalf("verify: %+v", rep)
	}
}

func TestLastLinesLongFile(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 5000; i++ { // > several 64 KiB chunks
		fmt.Fprintf(&b, "%d%s\n", i, strings.Repeat("x", 50))
	}
	r := bytes.NewReader(b.Bytes())
	lines, err := lastLines(r, int64(b.Len()), 2000)
	if err != nil || len(lines) != 2000 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	if !bytes.HasPrefix(lines[0], []byte("3000x")) || !bytes.HasPrefix(lines[1999], []byte("4999x")) {
		t.Fatalf("first %q last %q", lines[0][:6], lines[1999][:6])
	}
}
