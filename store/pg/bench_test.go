package pg

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/session"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

// BenchmarkCommit is PostgreSQL's floor here: one single-row INSERT per
// transaction, one connection, synchronous_commit on — the commits per
// second one serialised writer gets from this disk.
func BenchmarkCommit(b *testing.B) {
	db := openTest(b, pgtest.DSN(b))
	ctx := context.Background()
	if _, err := db.pool.Exec(ctx, `CREATE TABLE bench_commit (id bigint PRIMARY KEY, v text)`); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	i := 0
	for b.Loop() {
		i++
		if _, err := db.pool.Exec(ctx, `INSERT INTO bench_commit VALUES ($1, 'x')`, i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
}

// BenchmarkAuditAppend measures acknowledged (committed) audit appends
// with n concurrent appenders on each of r replicas (AuditLogs with their
// own pools, as separate `airs serve` processes would be), each replica on
// a chain of its own: records/s is the log's throughput, records/commit
// how many appends shared each transaction.
func BenchmarkAuditAppend(b *testing.B) {
	for _, c := range []struct{ replicas, appenders int }{{1, 1}, {1, 8}, {1, 64}, {3, 1}, {3, 64}} {
		b.Run(fmt.Sprintf("replicas=%d/appenders=%d", c.replicas, c.appenders), func(b *testing.B) {
			dsn := pgtest.DSN(b)
			logs := make([]*AuditLog, c.replicas)
			for i := range logs {
				logs[i] = openTest(b, dsn).AuditLog()
			}
			appendN(b, logs, c.appenders)
		})
	}
}

// BenchmarkAuditWriters compares one batch in flight per AuditLog with
// four, same appenders (each writer links into a chain of its own).
func BenchmarkAuditWriters(b *testing.B) {
	for _, appenders := range []int{8, 64} {
		for _, w := range []int{1, 4} {
			b.Run(fmt.Sprintf("appenders=%d/writers=%d", appenders, w), func(b *testing.B) {
				defer func(old int) { auditWriters = old }(auditWriters)
				auditWriters = w
				l := openTest(b, pgtest.DSN(b)).AuditLog()
				appendN(b, []*AuditLog{l}, appenders)
			})
		}
	}
}

// BenchmarkAuditReplicas is the scale-out comparison on the audit log
// alone: the same appenders (30 and 90, scripts/scale-out.sh's clients)
// all on one AuditLog, then spread over three (each with its own pool, as
// three `airs serve` replicas would be). records/s of replicas=3 over
// replicas=1 is the audit log's own throughput ratio.
func BenchmarkAuditReplicas(b *testing.B) {
	for _, total := range []int{30, 90} {
		for _, replicas := range []int{1, 3} {
			b.Run(fmt.Sprintf("appenders=%d/replicas=%d", total, replicas), func(b *testing.B) {
				dsn := pgtest.DSN(b)
				logs := make([]*AuditLog, replicas)
				for i := range logs {
					logs[i] = openTest(b, dsn).AuditLog()
				}
				appendN(b, logs, total/replicas)
			})
		}
	}
}

// appendN makes b.N appends from appenders goroutines per log and reports
// the rates.
func appendN(b *testing.B, logs []*AuditLog, appenders int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, l := range logs {
		for range appenders {
			wg.Go(func() {
				for next.Add(1) <= int64(b.N) {
					r := &audit.Record{Time: time.Now(), CallID: "c", Caller: "bench", Tool: "noop", Outcome: "ok",
						ParamsSHA256: "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"}
					if err := l.Append(r); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	var commits int64
	for _, l := range logs {
		l.Close()
		commits += l.Commits()
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(commits)/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(b.N)/float64(max(commits, 1)), "records/commit")
}

// BenchmarkSessionLogAppend measures acknowledged (committed) session
// records with n concurrent recorders' callers over r replicas (a
// session.Recorder each, on its own pool): records/s, the log's
// throughput under the append lock.
func BenchmarkSessionLogAppend(b *testing.B) {
	for _, c := range []struct{ replicas, callers int }{{1, 1}, {1, 64}, {3, 64}} {
		b.Run(fmt.Sprintf("replicas=%d/callers=%d", c.replicas, c.callers), func(b *testing.B) {
			dsn := pgtest.DSN(b)
			recs := make([]*session.Recorder, c.replicas)
			for i := range recs {
				recs[i] = session.OpenSink(openTest(b, dsn).SessionLog(), "bench", session.Options{})
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			for _, r := range recs {
				for range c.callers {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							if _, err := r.Record(ctx, session.Record{Channel: "serve", Caller: "bench", Request: "compute 2+3",
								Call: &session.Call{Tool: "calculator", Arguments: map[string]any{"expression": "2+3"}}}); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			for _, r := range recs {
				r.Close()
			}
		})
	}
}
