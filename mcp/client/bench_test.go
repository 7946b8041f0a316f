//go:build unix

package client

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// The overhead of a call through AIRS (pipeline's seven stages, then this
// package) to a stdio MCP server, against the go-sdk client calling the
// same server program directly. Each benchmark reports the p50 and p99 of
// one call's latency beside ns/op. BENCHMARKS.md has the figures and the
// command.

const benchConc = 50

func benchDirect(b *testing.B, extra int) *mcp.ClientSession {
	cmd := exec.Command(mcptest.Command()[0], mcptest.Command()[1:]...)
	cmd.Env = append(os.Environ(), mcptest.Env(filepath.Join(b.TempDir(), "events"), extra)...)
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })
	return sess
}

func benchAIRS(b *testing.B, extra int) (*pipeline.Manager, *Conn) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	c, err := Connect(context.Background(), reg, Server{Name: "b", Command: mcptest.Command(),
		Env: mcptest.Env(filepath.Join(b.TempDir(), "events"), extra), MaxTools: 2000})
	if err != nil {
		b.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close(); c.Close() })
	return m, c
}

// measure runs call b.N times over conc goroutines and reports latency
// percentiles.
func measure(b *testing.B, conc int, call func() error) {
	lat := make([]time.Duration, b.N)
	var next sync.Mutex
	i := 0
	b.ResetTimer()
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= b.N {
					return
				}
				t0 := time.Now()
				if err := call(); err != nil {
					b.Error(err)
					return
				}
				lat[k] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func directCall(sess *mcp.ClientSession) func() error {
	return func() error {
		_, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"s": "hi"}})
		return err
	}
}

func airsCall(m *pipeline.Manager) func() error {
	params := []byte(`{"s":"hi"}`)
	return func() error {
		_, err := m.Call(context.Background(), pipeline.Request{Tool: "b.echo", Params: params, Caller: "u"})
		return err
	}
}

// BenchmarkStdioCallPaired alternates a direct call and a call through
// AIRS in the same loop (same moment, same load), so that the machine's
// noise falls on both alike; it reports both p50s, their difference and
// their ratio.
func BenchmarkStdioCallPaired(b *testing.B) {
	for _, conc := range []int{1, benchConc} {
		b.Run(fmt.Sprintf("conc-%d", conc), func(b *testing.B) {
			direct, through := directCall(benchDirect(b, 0)), airsCall(first(benchAIRS(b, 0)))
			dl, al := make([]time.Duration, b.N), make([]time.Duration, b.N)
			var mu sync.Mutex
			i := 0
			b.ResetTimer()
			var wg sync.WaitGroup
			for range conc {
				wg.Go(func() {
					for {
						mu.Lock()
						k := i
						i++
						mu.Unlock()
						if k >= b.N {
							return
						}
						calls := [2]func() error{direct, through}
						lat := [2]*time.Duration{&dl[k], &al[k]}
						if k%2 == 1 { // alternate which goes first
							calls[0], calls[1], lat[0], lat[1] = calls[1], calls[0], lat[1], lat[0]
						}
						for j := range calls {
							t0 := time.Now()
							if err := calls[j](); err != nil {
								b.Error(err)
								return
							}
							*lat[j] = time.Since(t0)
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(dl)
			slices.Sort(al)
			d50, a50 := dl[len(dl)/2], al[len(al)/2]
			b.ReportMetric(float64(d50.Microseconds()), "direct-p50-µs")
			b.ReportMetric(float64(a50.Microseconds()), "airs-p50-µs")
			b.ReportMetric(float64((a50 - d50).Microseconds()), "added-p50-µs")
			b.ReportMetric(float64(a50)/float64(d50), "p50-ratio")
		})
	}
}

// BenchmarkStdioCallLayers splits a call through AIRS, one call of each in
// turn: the go-sdk client alone (direct), this package's Conn alone
// (conn, and conndl with a deadline as the pipeline sets one), and the
// whole pipeline (airs); the difference airs − conn is the seven stages.
func BenchmarkStdioCallLayers(b *testing.B) {
	direct := directCall(benchDirect(b, 0))
	m, c := benchAIRS(b, 0)
	through := airsCall(m)
	conn := func() error {
		_, err := c.invoke(context.Background(), "echo", "h.echo", []byte(`{"s":"hi"}`))
		return err
	}
	connDL := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.invoke(ctx, "echo", "h.echo", []byte(`{"s":"hi"}`))
		return err
	}
	calls := []func() error{direct, conn, through, connDL}
	lat := make([][]time.Duration, 4)
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		for j := range calls {
			jj := (j + k) % 4
			t0 := time.Now()
			if err := calls[jj](); err != nil {
				b.Fatal(err)
			}
			lat[jj] = append(lat[jj], time.Since(t0))
		}
	}
	for j, n := range []string{"direct", "conn", "airs", "conndl"} {
		slices.Sort(lat[j])
		b.ReportMetric(float64(lat[j][len(lat[j])/2].Microseconds()), n+"-p50-µs")
	}
}

func first[A, B any](a A, _ B) A { return a }

func BenchmarkStdioCall(b *testing.B) {
	b.Run("direct", func(b *testing.B) { measure(b, 1, directCall(benchDirect(b, 0))) })
	b.Run("airs", func(b *testing.B) { m, _ := benchAIRS(b, 0); measure(b, 1, airsCall(m)) })
	b.Run("direct-50", func(b *testing.B) { measure(b, benchConc, directCall(benchDirect(b, 0))) })
	b.Run("airs-50", func(b *testing.B) { m, _ := benchAIRS(b, 0); measure(b, benchConc, airsCall(m)) })
}

// BenchmarkToolsList1000 lists a server's 1,000 tools: the go-sdk client
// alone, and AIRS's sync (list, map, grammar check, registry compare).
func BenchmarkToolsList1000(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		sess := benchDirect(b, 1000)
		measure(b, 1, func() error {
			n := 0
			for _, err := range sess.Tools(context.Background(), nil) {
				if err != nil {
					return err
				}
				n++
			}
			return nil
		})
	})
	b.Run("airs", func(b *testing.B) {
		_, c := benchAIRS(b, 1000)
		measure(b, 1, func() error {
			l, err := c.get(context.Background())
			if err != nil {
				return err
			}
			_, err = c.sync(context.Background(), l, false)
			return err
		})
	})
}
