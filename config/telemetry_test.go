package config

import (
	"strings"
	"testing"
)

func TestTelemetry(t *testing.T) {
	c, err := Parse("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Telemetry.Endpoint != "" {
		t.Errorf("tracing is on by default: %+v", c.Telemetry)
	}
	c, err = Parse("airs.yaml", []byte("telemetry:\n  otlp:\n    endpoint: http://127.0.0.1:4318\n    headers: {x-api-key: k}\n    sample_ratio: 0.5\n  service_name: airs-a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tm := c.Telemetry; tm.Endpoint != "http://127.0.0.1:4318" || tm.Headers["x-api-key"] != "k" || tm.SampleRatio != 0.5 || tm.ServiceName != "airs-a" {
		t.Errorf("telemetry %+v", tm)
	}
	_, err = Parse("airs.yaml", []byte("telemetry:\n  otlp:\n    endpoint: 127.0.0.1:4318\n    sample_ratio: 2\n"))
	if err == nil || !strings.Contains(err.Error(), "telemetry.otlp.endpoint") || !strings.Contains(err.Error(), "sample_ratio") {
		t.Errorf("bad telemetry accepted: %v", err)
	}
}
