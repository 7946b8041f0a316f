package pg

import (
	"bufio"
	"context"
	"encoding/hex"
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
	"github.com/airs-dev/airs/store/pg/pgtest"
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

// The server links the same lines Go does (audit.AppendChainLine), byte
// for byte — escapes, non-ASCII and invalid UTF-8 included — and their
// bodies are the file log's: one encoding, one Verify rule per chain.
func TestAuditLinesMatchTheFileLog(t *testing.T) {
	db := openTest(t, pgtest.DSN(t))
	pl := db.AuditLog()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	fl, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	score := 0.25
	var want []string
	var prev [32]byte
	for i := range 20 {
		r := record("alice", i)
		if i%3 == 0 {
			r.Error, r.Outcome, r.AnomalyScore = "timeout", "error", &score
		}
		if i%4 == 1 {
			// Escapes, non-ASCII and invalid UTF-8: the server links these
			// bodies (airs_audit_append_chain) and must hash the same bytes.
			r.Caller, r.Tool = "zoë ☃ \"q\"\n\t\x01", "bad\xff\xfeutf8 𝄞"
		}
		r2 := *r
		if err := pl.Append(r); err != nil {
			t.Fatal(err)
		}
		if err := fl.Append(&r2); err != nil {
			t.Fatal(err)
		}
		if r.Seq != uint64(i+1) || r.Chain != 1 || r.Prev != hex.EncodeToString(prev[:]) {
			t.Fatalf("record %d: seq %d chain %d prev %s, want seq %d of chain 1 after %x", i, r.Seq, r.Chain, r.Prev, i+1, prev)
		}
		var line []byte
		line, prev = audit.AppendChainLine(nil, r.Seq, 1, prev, r.AppendBody(nil))
		want = append(want, string(line))
	}
	pl.Close()
	fl.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fileLines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	pgLines := auditLines(t, db)
	if strings.Join(pgLines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the server's lines are not Go's:\npostgres %q\ngo       %q", pgLines[0], want[0])
	}
	for i := range pgLines {
		_, pgBody, _ := strings.Cut(pgLines[i], `",`)
		_, fileBody, _ := strings.Cut(fileLines[i], `",`)
		if pgBody != fileBody {
			t.Fatalf("record %d: the body differs from the file log's:\npostgres %q\nfile     %q", i, pgBody, fileBody)
		}
	}
	rep, err := db.VerifyAudit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Records != 20 || rep.LastHash != hex.EncodeToString(prev[:]) || len(rep.Chains) != 2 ||
		rep.Chains[1].Records != 20 || rep.Chains[1].LastHash != rep.LastHash || rep.Chains[0].Records != 0 {
		t.Fatalf("postgres verify %+v: want 20 records in chain 1, ending at %x", rep, prev)
	}
	tail, err := db.TailAudit(context.Background(), 3)
	if err != nil || len(tail) != 3 || tail[2].Seq != 20 || tail[0].CallID != "alice-17" || tail[0].Chain != 1 {
		t.Fatalf("TailAudit(3) = %+v, %v", tail, err)
	}
}

// Several replicas (here: several DBs, each with its own pool and writer)
// and many goroutines each append at once: one chain per replica, merged
// in one seq order, every acknowledged record in its replica's chain once,
// at the seq Append reported.
func TestAuditConcurrentAppendsOneChainEach(t *testing.T) {
	dsn := pgtest.DSN(t)
	const replicas, workers, each = 3, 16, 40
	type ack struct {
		id         string
		seq, chain uint64
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
					acks <- ack{r.CallID, r.Seq, r.Chain}
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
		t.Fatalf("verify: %+v (break %v), want %d records and intact chains", rep, rep.Break, total)
	}
	if len(rep.Chains) != replicas+1 {
		t.Fatalf("%d chains, want chain 0 (empty) and one per replica: %+v", len(rep.Chains), rep.Chains)
	}
	for _, c := range rep.Chains[1:] {
		if c.Records != workers*each {
			t.Fatalf("chain %d has %d records, want one replica's %d", c.Chain, c.Records, workers*each)
		}
	}
	type at struct{ seq, chain uint64 }
	byID := map[string]at{}
	chainOf := map[string]uint64{} // replica → chain
	for i, line := range auditLines(t, db) {
		var r struct {
			Seq    uint64 `json:"seq"`
			Chain  uint64 `json:"chain"`
			CallID string `json:"call_id"`
		}
		// No batch failed, so no seq was skipped.
		if err := jsonUnmarshal(line, &r); err != nil || r.Seq != uint64(i+1) {
			t.Fatalf("line %d: %v seq %d", i+1, err, r.Seq)
		}
		byID[r.CallID] = at{r.Seq, r.Chain}
		replica, _, _ := strings.Cut(r.CallID, "-")
		if c, ok := chainOf[replica]; ok && c != r.Chain {
			t.Fatalf("replica %s wrote to chains %d and %d", replica, c, r.Chain)
		}
		chainOf[replica] = r.Chain
	}
	seen := map[string]bool{}
	for a := range acks {
		if got := byID[a.id]; got != (at{a.seq, a.chain}) {
			t.Fatalf("Append said %s is seq %d of chain %d; the log has it at %+v", a.id, a.seq, a.chain, got)
		}
		if seen[a.id] {
			t.Fatalf("%s acknowledged twice", a.id)
		}
		seen[a.id] = true
	}
	if len(seen) != total {
		t.Fatalf("%d acknowledged, want %d", len(seen), total)
	}
	// The readers read the chains merged, in seq order.
	var last uint64
	read := 0
	if err := db.ReadAudit(context.Background(), func(r *audit.Record) error {
		if r.Seq <= last || r.Chain == 0 {
			return fmt.Errorf("ReadAudit: seq %d (chain %d) after seq %d", r.Seq, r.Chain, last)
		}
		last = r.Seq
		read++
		return nil
	}); err != nil || read != total {
		t.Fatalf("ReadAudit: %d records, %v", read, err)
	}
	tail, err := db.TailAudit(context.Background(), 5)
	if err != nil || len(tail) != 5 || tail[0].Seq != uint64(total-4) || tail[4].Seq != uint64(total) {
		t.Fatalf("TailAudit(5) = %+v, %v: want seqs %d…%d", tail, err, total-4, total)
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
// mid-stream: every chain verifies, and every record any process
// acknowledged is in the log exactly once, at the seq it was told.
func TestAuditSeveralProcessesAndAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dsn := pgtest.DSN(t)
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
	if len(rep.Chains) != procs+1 {
		t.Fatalf("%d chains after %d processes, want one each (and chain 0): %+v", len(rep.Chains), procs, rep.Chains)
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

// Every way of tampering with rows or heads is found, at the right row:
// editing, deleting, cutting a chain's end, moving a record to another
// chain or to another place in the merged order, copying one into a second
// chain, deleting a chain or a head. Two AuditLogs append in turn, so
// chain 1 holds the odd seqs 1–23 (caller bob) and chain 2 the even ones
// 2–24 (carol).
func TestAuditVerifyFindsTampering(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, sql string
		line      int
		reason    string
	}{
		{"edit", `UPDATE airs_audit SET line = replace(line, '"caller":"bob"', '"caller":"eve"') WHERE seq = 7`, 9, "chain 1: prev hash"},
		{"delete", `DELETE FROM airs_audit WHERE seq = 5`, 6, "chain 1: prev hash"},
		{"cut one chain's end", `DELETE FROM airs_audit WHERE chain = 1 AND seq > 19`, 23,
			"chain 1: the chain head says the last record is seq 23, the chain's records end at seq 19"},
		{"cut the end", `DELETE FROM airs_audit WHERE seq > 20`, 21, "chain 1: the chain head says the last record is seq 23"},
		{"not json", `UPDATE airs_audit SET line = 'x' WHERE seq = 3`, 3, "not a record"},
		{"move to another chain", `UPDATE airs_audit SET chain = 2 WHERE seq = 7`, 7, "names chain 1, it is filed in chain 2"},
		{"move to another chain, line rewritten", `UPDATE airs_audit SET chain = 2, line = replace(line, '"chain":1,', '"chain":2,') WHERE seq = 7`,
			7, "chain 2: prev hash"},
		{"move to the old chain 0", `UPDATE airs_audit SET chain = 0 WHERE seq = 7`, 7, "names chain 1 in a log of one chain"},
		{"swap places across chains", `UPDATE airs_audit SET seq = 1000 WHERE seq = 7; UPDATE airs_audit SET seq = 7 WHERE seq = 8;
			UPDATE airs_audit SET seq = 8 WHERE seq = 1000`, 7, "chain 2: the record says seq 8, its row is seq 7"},
		{"swap places across chains, lines renumbered", `UPDATE airs_audit SET seq = 1000 WHERE seq = 7;
			UPDATE airs_audit SET seq = 7, line = replace(line, '{"seq":8,', '{"seq":7,') WHERE seq = 8;
			UPDATE airs_audit SET seq = 8, line = replace(line, '{"seq":7,', '{"seq":8,') WHERE seq = 1000`, 9, "chain 1: prev hash"},
		{"copied into a second chain", `INSERT INTO airs_audit (seq, chain, line) SELECT 25, 2, line FROM airs_audit WHERE seq = 7`,
			25, "names chain 1, it is filed in chain 2"},
		{"a chain deleted with its head", `DELETE FROM airs_audit WHERE chain = 1; DELETE FROM airs_audit_chains WHERE chain = 1`,
			13, "chain 1 has no head (the chains go on at 2)"},
		{"a head deleted", `DELETE FROM airs_audit_chains WHERE chain = 2`, 25, "chain 2 has records but no head"},
		{"a head edited", `UPDATE airs_audit_chains SET hash = sha256('x') WHERE chain = 2`, 25, "chain 2: the chain head's hash is not its last record's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t, pgtest.DSN(t))
			bob, carol := db.AuditLog(), db.AuditLog()
			for i := range 24 {
				l, who := bob, "bob"
				if i%2 == 1 {
					l, who = carol, "carol"
				}
				r := record(who, i)
				if err := l.Append(r); err != nil {
					t.Fatal(err)
				}
				if r.Seq != uint64(i+1) || r.Chain != uint64(i%2+1) {
					t.Fatalf("record %d: seq %d chain %d", i, r.Seq, r.Chain)
				}
			}
			bob.Close()
			carol.Close()
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

// A database whose log was kept as one chain (schema version 9) migrates
// to chains: its records become chain 0, verified exactly as before; new
// appends start chain 1 after its last seq; an older airs still appending
// the old way is refused with a message saying why; tampering with chain 0
// is still found.
func TestAuditMigratesTheOneChain(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	pool := testPool(t, dsn)
	if err := migrate(ctx, pool, migrations[:9]); err != nil {
		t.Fatal(err)
	}
	bodies := make([]string, 5)
	for i := range bodies {
		bodies[i] = string(record("old", i).AppendBody(nil))
	}
	// As an airs of schema version 9 appends.
	if _, err := pool.Exec(ctx, `SELECT * FROM airs_audit_append($1::text[])`, bodies); err != nil {
		t.Fatal(err)
	}
	db := openTest(t, dsn)
	rep, err := db.VerifyAudit(ctx)
	if err != nil || !rep.OK() || rep.Records != 5 || len(rep.Chains) != 1 || rep.Chains[0].Records != 5 || rep.Chains[0].LastSeq != 5 {
		t.Fatalf("the migrated log: %+v %v", rep, err)
	}
	old := rep.Chains[0].LastHash
	l := db.AuditLog()
	for i := range 3 {
		r := record("new", i)
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		if r.Seq != uint64(6+i) || r.Chain != 1 || (i == 0 && r.Prev != audit.Genesis) {
			t.Fatalf("new record %d: seq %d chain %d prev %s, want seq %d of chain 1", i, r.Seq, r.Chain, r.Prev, 6+i)
		}
	}
	l.Close()
	rep, err = db.VerifyAudit(ctx)
	if err != nil || !rep.OK() || rep.Records != 8 || len(rep.Chains) != 2 || rep.Chains[0].LastHash != old || rep.Chains[1].Records != 3 {
		t.Fatalf("after new appends: %+v %v", rep, err)
	}
	_, err = pool.Exec(ctx, `SELECT * FROM airs_audit_append($1::text[])`, bodies)
	if err == nil || !strings.Contains(err.Error(), "this airs is older than the database's audit log") {
		t.Fatalf("an older airs's append after the migration: %v, want a refusal saying why", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE airs_audit SET line = replace(line, '"caller":"old"', '"caller":"eve"') WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	rep, err = db.VerifyAudit(ctx)
	if err != nil || rep.OK() || rep.Break.Line != 3 || !strings.Contains(rep.Break.Reason, "chain 0: prev hash") {
		t.Fatalf("chain 0 edited: %+v %v", rep, err)
	}
}

func TestAuditAppendAfterClose(t *testing.T) {
	db := openTest(t, pgtest.DSN(t))
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
	dsn := pgtest.DSN(t)
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

// Gathering: a lone call never waits for company (an hour's Gather
// would hang this test), and concurrent appenders share commits: with
// Gather the same appends take fewer commits than without, and every
// record is still linked into the one chain. The writer gathers toward
// the largest recent batch, so 8 appenders are gathered as soon as all 8
// are in, not after the whole Gather.
func TestAuditGather(t *testing.T) {
	db := openTest(t, pgtest.DSN(t))
	lone := db.AuditLogWith(AuditOptions{Gather: time.Hour})
	for i := range 5 {
		if err := lone.Append(record("lone", i)); err != nil {
			t.Fatal(err)
		}
	}
	lone.Close()
	if c := lone.Commits(); c != 5 {
		t.Fatalf("5 sequential appends took %d commits, want 5", c)
	}

	run := func(gather time.Duration) (commits int64, took time.Duration) {
		l := db.AuditLogWith(AuditOptions{Gather: gather})
		defer l.Close()
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		start := time.Now()
		for g := range 8 {
			wg.Go(func() {
				for i := range 40 {
					if err := l.Append(record(fmt.Sprintf("g%d", g), i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		took = time.Since(start)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if r := l.Records(); r != 320 {
			t.Fatalf("%d records committed, want 320", r)
		}
		return l.Commits(), took
	}
	without, _ := run(0)
	with, took := run(250 * time.Millisecond)
	t.Logf("320 appends from 8 goroutines: %d commits without gathering, %d with (%v)", without, with, took)
	// Gathering, a batch is the 8 appenders' next records: about 40
	// commits. Without, a batch is what arrived during the last commit,
	// usually fewer.
	if with > 60 || with >= without {
		t.Fatalf("gathering took %d commits (without: %d), want at most 60 and fewer", with, without)
	}
	// Had each of those ~40 gathers waited out its 250 ms (a fixed target
	// above 8 would), the run would take 10 s.
	if took > 5*time.Second {
		t.Fatalf("gathering 320 appends took %v: the writer waited out its Gather instead of stopping at the recent batch size", took)
	}
	rep, err := db.VerifyAudit(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("verify after gathering: %v %+v", err, rep)
	}
}

// batchSizes: the largest of the last 16 batches, falling once a burst
// has left the window.
func TestBatchSizes(t *testing.T) {
	var s batchSizes
	if s.last() != 0 || s.max() != 0 {
		t.Fatalf("empty: last %d max %d", s.last(), s.max())
	}
	s.add(3)
	s.add(12)
	s.add(5)
	if s.last() != 5 || s.max() != 12 {
		t.Fatalf("after 3, 12, 5: last %d max %d, want 5 and 12", s.last(), s.max())
	}
	for range 15 {
		s.add(4)
	}
	if s.last() != 4 || s.max() != 5 {
		t.Fatalf("12 has left the window but 5 has not: last %d max %d, want 4 and 5", s.last(), s.max())
	}
	s.add(4)
	if s.max() != 4 {
		t.Fatalf("max %d, want 4", s.max())
	}
}
