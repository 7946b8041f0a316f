package pg

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

func TestMain(m *testing.M) {
	if os.Getenv("AIRS_PG_AUDIT_CHILD") != "" {
		os.Exit(auditChild())
	}
	os.Exit(m.Run())
}

func record(caller string, i int) *audit.Record {
	return &audit.Record{Time: time.Date(2026, 12, 3, 8, 0, 0, i, time.UTC), CallID: fmt.Sprintf("%s-%d", caller, i),
		Caller: caller, Tool: "read-file", Provider: "builtin", ParamsSHA256: strings.Repeat("ab", 32),
		Outcome: "ok", LatencyNs: int64(1000 + i)}
}

// auditLines reads the stored lines in seq order.
func auditLines(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.pool.Query(context.Background(), `SELECT line FROM airs_audit ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// The same records make the same lines, so the same hashes, as the file
// log: one encoding, one Verify rule.
func TestAuditLinesMatchTheFileLog(t *testing.T) {
	db := openTest(t, testDSN(t))
	pl := db.AuditLog()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	fl, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	score := 0.25
	for i := range 20 {
		r := record("alice", i)
		if i%3 == 0 {
			r.Error, r.Outcome, r.AnomalyScore = "timeout", "error", &score
		}
		if i%4 == 1 {
			// Escapes, non-ASCII and invalid UTF-8: the server links these
			// bodies (airs_audit_append) and must hash the same bytes.
			r.Caller, r.Tool = "zoë ☃ \"q\"\n\t\x01", "bad\xff\xfeutf8 𝄞"
		}
		r2 := *r
		if err := pl.Append(r); err != nil {
			t.Fatal(err)
		}
		if err := fl.Append(&r2); err != nil {
			t.Fatal(err)
		}
		if r.Seq != r2.Seq || r.Prev != r2.Prev {
			t.Fatalf("record %d: postgres seq %d prev %s, file seq %d prev %s", i, r.Seq, r.Prev, r2.Seq, r2.Prev)
		}
	}
	pl.Close()
	fl.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fileLines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	pgLines := auditLines(t, db)
	if strings.Join(pgLines, "\n") != strings.Join(fileLines, "\n") {
		t.Fatalf("the lines differ:\npostgres %q\nfile     %q", pgLines[0], fileLines[0])
	}
	rep, err := db.VerifyAudit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	frep, err := audit.Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Records != 20 || rep.LastHash != frep.LastHash {
		t.Fatalf("postgres verify %+v, file verify %+v: want both OK with the same last hash", rep, frep)
	}
	tail, err := db.TailAudit(context.Background(), 3)
	if err != nil || len(tail) != 3 || tail[2].Seq != 20 || tail[0].CallID != "alice-17" {
		t.Fatalf("TailAudit(3) = %+v, %v", tail, err)
	}
}

// Several replicas (here: several DBs, each with its own pool and writer)
// and many goroutines each append at once: one chain, every acknowledged
// record in it once, seqs as Append reported them.
func TestAuditConcurrentAppendsOneChain(t *testing.T) {
	dsn := testDSN(t)
	const replicas, workers, each = 3, 16, 40
	type ack struct {
		id  string
		seq uint64
	}
	acks := make(chan ack, replicas*workers*each)
	var wg sync.WaitGroup
	var logs []*AuditLog
	for rep := range replicas {
		l := openTest(t, dsn).AuditLog()
		logs = append(logs, l)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					r := record(fmt.Sprintf("r%d-w%d", rep, w), i)
					if err := l.Append(r); err != nil {
						t.Error(err)
						return
					}
					acks <- ack{r.CallID, r.Seq}
				}
			})
		}
	}
	wg.Wait()
	close(acks)
	var commits int64
	for _, l := range logs {
		l.Close()
		commits += l.Commits()
	}
	db := openTest(t, dsn)
	rep, err := db.VerifyAudit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := replicas * workers * each
	if !rep.OK() || rep.Records != total {
		t.Fatalf("verify: %+v (break %v), want %d records and an intact chain", rep, rep.Break, total)
	}
	bySeq := map[uint64]string{}
	for i, line := range auditLines(t, db) {
		var r struct {
			Seq    uint64 `json:"seq"`
			CallID string `json:"call_id"`
		}
		if err := jsonUnmarshal(line, &r); err != nil || r.Seq != uint64(i+1) {
			t.Fatalf("line %d: %v seq %d", i+1, err, r.Seq)
		}
		bySeq[r.Seq] = r.CallID
	}
	seen := map[string]bool{}
	for a := range acks {
		if bySeq[a.seq] != a.id {
			t.Fatalf("Append said %s is seq %d; the log has %q there", a.id, a.seq, bySeq[a.seq])
		}
		if seen[a.id] {
			t.Fatalf("%s acknowledged twice", a.id)
		}
		seen[a.id] = true
	}
	if len(seen) != total {
		t.Fatalf("%d acknowledged, want %d", len(seen), total)
	}
	t.Logf("%d records in %d commits (%.1f a commit)", total, commits, float64(total)/float64(commits))
	if commits >= int64(total) {
		t.Errorf("%d commits for %d concurrent records: appends were not grouped", commits, total)
	}
}

// auditChild appends records from several goroutines and prints "ack ID"
// after each Append returned nil, until killed or done.
func auditChild() int {
	dsn, name := os.Getenv("AIRS_PG_AUDIT_DSN"), os.Getenv("AIRS_PG_AUDIT_CHILD")
	n, _ := strconv.Atoi(os.Getenv("AIRS_PG_AUDIT_N"))
	db, err := Open(context.Background(), dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	l := db.AuditLog()
	defer l.Close()
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := false
	for w := range 8 {
		wg.Go(func() {
			for i := range n {
				r := record(fmt.Sprintf("%s-w%d", name, w), i)
				if err := l.Append(r); err != nil {
					fmt.Fprintln(os.Stderr, err)
					mu.Lock()
					failed = true
					mu.Unlock()
					return
				}
				mu.Lock()
				// Unbuffered: what was printed is what a client was told.
				fmt.Fprintf(os.Stdout, "ack %s %d\n", r.CallID, r.Seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed {
		return 1
	}
	return 0
}

// Several processes append at once, and one is killed with SIGKILL
// mid-stream: the chain verifies, and every record any process
// acknowledged is in it exactly once.
func TestAuditSeveralProcessesAndAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dsn := testDSN(t)
	openTest(t, dsn) // migrate once, so the children's migration is a no-op
	const procs, each = 4, 150
	acked := map[string]uint64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AIRS_PG_AUDIT_CHILD=p"+strconv.Itoa(p), "AIRS_PG_AUDIT_DSN="+dsn, "AIRS_PG_AUDIT_N="+strconv.Itoa(each))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
		wg.Go(func() {
			sc := bufio.NewScanner(out)
			n := 0
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) != 3 || f[0] != "ack" {
					continue
				}
				seq, _ := strconv.ParseUint(f[2], 10, 64)
				mu.Lock()
				acked[f[1]] = seq
				mu.Unlock()
				n++
				// The last process dies a third of the way through.
				if p == procs-1 && n == each*8/3 {
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
			}
		})
	}
	wg.Wait()
	for p, cmd := range cmds {
		err := cmd.Wait()
		if p < procs-1 && err != nil {
			t.Fatalf("process %d: %v", p, err)
		}
	}
	db := openTest(t, dsn)
	rep, err := db.VerifyAudit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("chain broken after concurrent processes and a kill: %v", rep.Break)
	}
	lines := auditLines(t, db)
	got := map[string]uint64{}
	for _, line := range lines {
		var r struct {
			Seq    uint64 `json:"seq"`
			CallID string `json:"call_id"`
		}
		if err := jsonUnmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if _, dup := got[r.CallID]; dup {
			t.Fatalf("%s is in the log twice", r.CallID)
		}
		got[r.CallID] = r.Seq
	}
	for id, seq := range acked {
		if got[id] != seq {
			t.Fatalf("%s was acknowledged as seq %d; the log has it at %d (0: missing)", id, seq, got[id])
		}
	}
	full := (procs - 1) * 8 * each
	if len(acked) < full+each*8/3 || rep.Records < len(acked) {
		t.Fatalf("%d acknowledged, %d in the log: want at least %d acknowledged", len(acked), rep.Records, full+each*8/3)
	}
	t.Logf("%d processes (one killed): %d acknowledged, %d in the log (the difference: the killed process's unacknowledged last batch)", procs, len(acked), rep.Records)
}

// Editing, deleting or cutting rows is found, at the right record.
func TestAuditVerifyFindsTampering(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, sql string
		line      int
		reason    string
	}{
		{"edit", `UPDATE airs_audit SET line = replace(line, '"caller":"bob"', '"caller":"eve"') WHERE seq = 7`, 8, "prev hash"},
		{"delete", `DELETE FROM airs_audit WHERE seq = 5`, 5, "seq 6, want 5"},
		{"cut the end", `DELETE FROM airs_audit WHERE seq > 10`, 11, "chain head says the last record is seq 12"},
		{"not json", `UPDATE airs_audit SET line = 'x' WHERE seq = 3`, 3, "not a record"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t, testDSN(t))
			l := db.AuditLog()
			for i := range 12 {
				if err := l.Append(record("bob", i)); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()
			if rep, err := db.VerifyAudit(ctx); err != nil || !rep.OK() {
				t.Fatalf("before tampering: %+v %v", rep, err)
			}
			if _, err := db.pool.Exec(ctx, tc.sql); err != nil {
				t.Fatal(err)
			}
			rep, err := db.VerifyAudit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatalf("%s went unnoticed: %+v", tc.name, rep)
			}
			if rep.Break.Line != tc.line || !strings.Contains(rep.Break.Reason, tc.reason) {
				t.Fatalf("break %v, want line %d saying %q", rep.Break, tc.line, tc.reason)
			}
		})
	}
}

func TestAuditAppendAfterClose(t *testing.T) {
	db := openTest(t, testDSN(t))
	l := db.AuditLog()
	l.Close()
	if err := l.Append(record("x", 0)); err != ErrAuditClosed {
		t.Fatalf("Append after Close: %v, want ErrAuditClosed", err)
	}
}

// Connections killed under the appenders (a database restart, a proxy
// dropping them): an Append either fails or its record is in the chain,
// and the chain stays one and intact — the next batch reads the head
// afresh whatever happened to the last.
func TestAuditKilledConnections(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn)
	l := db.AuditLog()
	admin := openTest(t, dsn)
	var mu sync.Mutex
	acked := map[string]uint64{}
	failed := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := record(fmt.Sprintf("w%d", w), i)
				err := l.Append(r)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					acked[r.CallID] = r.Seq
				}
				mu.Unlock()
			}
		})
	}
	ctx := context.Background()
	killed := 0
	for range 10 {
		time.Sleep(60 * time.Millisecond)
		var n int
		if err := admin.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = ''`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		killed += n
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	l.Close()
	rep, err := admin.VerifyAudit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("chain broken after killed connections: %v", rep.Break)
	}
	got := map[string]uint64{}
	for _, line := range auditLines(t, admin) {
		var r struct {
			Seq    uint64 `json:"seq"`
			CallID string `json:"call_id"`
		}
		if err := jsonUnmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		got[r.CallID] = r.Seq
	}
	for id, seq := range acked {
		if got[id] != seq {
			t.Fatalf("%s acknowledged at seq %d, the log has %d", id, seq, got[id])
		}
	}
	if killed == 0 || len(acked) == 0 {
		t.Fatalf("killed %d connections, %d acknowledged: the test tested nothing", killed, len(acked))
	}
	t.Logf("%d connections killed: %d appends acknowledged, %d failed, %d records in the chain", killed, len(acked), failed, rep.Records)
}
