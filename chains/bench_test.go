package chains

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkParallelSteps runs k independent 100 ms steps with MaxParallel
// k and reports elapsed/one-step as "ratio" (1.0 is perfect parallelism;
// sequential would be k):
//
//	go test -run '^$' -bench BenchmarkParallelSteps -benchtime 5x ./chains/
func BenchmarkParallelSteps(b *testing.B) {
	const step = 100 * time.Millisecond
	for _, k := range []int{2, 8, 32} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			x := stdExec()
			o := opts(x)
			o.MaxParallel = k
			c := parallelChain(k, step)
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := Run(context.Background(), c, nil, o); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total)/float64(b.N)/float64(step), "ratio")
		})
	}
}

// BenchmarkOverhead measures what chains adds around the calls: a 20-step
// diamond-shaped chain of instant tools.
func BenchmarkOverhead(b *testing.B) {
	x := stdExec()
	c := &Chain{Name: "diamond", Steps: []*Step{{ID: "root", Tool: "count", Params: MustTemplate(map[string]any{"n": 1})}}}
	for i := range 18 {
		c.Steps = append(c.Steps, &Step{ID: fmt.Sprintf("m%d", i), Tool: "count",
			Params: MustTemplate(map[string]any{"n": "{{steps.root.output.n}}"})})
	}
	join := map[string]any{}
	for i := range 18 {
		join[fmt.Sprintf("m%d", i)] = fmt.Sprintf("{{steps.m%d.output.n}}", i)
	}
	c.Steps = append(c.Steps, &Step{ID: "join", Tool: "echo", Params: MustTemplate(join)})
	o := opts(x)
	b.ReportAllocs()
	for b.Loop() {
		x.mu.Lock()
		x.requests = x.requests[:0]
		x.mu.Unlock()
		if _, err := Run(context.Background(), c, nil, o); err != nil {
			b.Fatal(err)
		}
	}
}
