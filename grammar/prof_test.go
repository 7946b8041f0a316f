package grammar

import (
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const glaiveSchema = `{"properties":{"data":{"items":{"properties":{"measurement":{"description":"The type of measurement","type":"string"},"timestamp":{"description":"The timestamp of the measurement","format":"date-time","type":"string"},"value":{"description":"The value of the measurement","type":"number"}},"required":["measurement","value","timestamp"],"type":"object"},"type":"array"}},"required":["data"],"type":"object"}`

func BenchmarkCompileGlaive(b *testing.B) {
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		_, err := Compile([]byte(glaiveSchema), Options{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
}

// BenchmarkCompileGlaiveCold compiles without the rule cache (every DFA
// built and minimized).
func BenchmarkCompileGlaiveCold(b *testing.B) {
	ruleCacheOff = true
	defer func() { ruleCacheOff = false }()
	BenchmarkCompileGlaive(b)
}

func BenchmarkToolCallCached(b *testing.B) {
	tools := bfclTools(b, 60)
	if _, err := ToolCall(tools[:50], ToolCallOptions{AllowNone: true}); err != nil {
		b.Fatal(err)
	}
	sub := append(append([]ToolSchema(nil), tools[5:50]...), tools[:5]...)
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := ToolCall(sub, ToolCallOptions{AllowNone: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
}

// BenchmarkToolCallCold builds the 50-tool grammar with empty caches.
func BenchmarkToolCallCold(b *testing.B) {
	tools := bfclTools(b, 60)
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		toolCache.Clear()
		ruleCacheMu.Lock()
		clear(ruleCache)
		ruleCacheMu.Unlock()
		if _, err := ToolCall(tools[:50], ToolCallOptions{AllowNone: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
}
