package audit

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend measures durable appends alone (group commit, one
// fdatasync per batch) with n concurrent appenders; records/sync shows how
// many appends shared each sync.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 8, 64, 256} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			l, err := Open(filepath.Join(b.TempDir(), "a.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						r := &Record{Time: time.Now(), CallID: "c", Caller: "bench", Tool: "noop", Outcome: "ok",
							ParamsSHA256: "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"}
						if err := l.Append(r); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			b.ReportMetric(float64(b.N)/float64(max(l.syncs.Load(), 1)), "records/sync")
			l.Close()
		})
	}
}

// BenchmarkAppendTwoWriters is BenchmarkAppend with the appenders split
// over two Logs on one file (as `airs serve` and a CLI process): every
// batch of one finds the other's records at the tail and re-reads it.
func BenchmarkAppendTwoWriters(b *testing.B) {
	path := filepath.Join(b.TempDir(), "a.jsonl")
	var logs [2]*Log
	for i := range logs {
		l, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		logs[i] = l
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := logs[g%2]
			for next.Add(1) <= int64(b.N) {
				r := &Record{Time: time.Now(), CallID: "c", Caller: "bench", Tool: "noop", Outcome: "ok",
					ParamsSHA256: "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"}
				if err := l.Append(r); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	b.ReportMetric(float64(logs[0].Rereads()+logs[1].Rereads())/float64(max(logs[0].syncs.Load()+logs[1].syncs.Load(), 1)), "rereads/sync")
	for _, l := range logs {
		l.Close()
	}
	if rep, err := Verify(path); err != nil || !rep.OK() {
		b.Fatalf("verify: %+v %v", rep, err)
	}
}
