package config

import (
	"net/url"
)

// Telemetry configures tracing (telemetry: in airs.yaml; internal/telemetry).
// Off by default: with no otlp.endpoint nothing is traced and nothing is
// spent.
//
//	telemetry:
//	  otlp:
//	    endpoint: http://127.0.0.1:4318   # an OTLP/HTTP receiver (a collector, Jaeger, Tempo …)
//	    headers: {x-api-key: "…"}         # sent with every export
//	    sample_ratio: 1.0                 # share of new traces recorded
//	  service_name: airs
type Telemetry struct {
	Endpoint    string
	Headers     map[string]string
	SampleRatio float64
	ServiceName string
}

type fileTelemetry struct {
	OTLP struct {
		Endpoint    string            `yaml:"endpoint"`
		Headers     map[string]string `yaml:"headers"`
		SampleRatio *float64          `yaml:"sample_ratio"`
	} `yaml:"otlp"`
	ServiceName string `yaml:"service_name"`
}

func (p *parser) buildTelemetry(fc *fileConfig, c *Config) {
	f := fc.Telemetry
	c.Telemetry = Telemetry{Endpoint: f.OTLP.Endpoint, Headers: f.OTLP.Headers, SampleRatio: 1, ServiceName: f.ServiceName}
	if e := f.OTLP.Endpoint; e != "" {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add(p.line("telemetry", "otlp", "endpoint"), "telemetry.otlp.endpoint %q: want an OTLP/HTTP URL such as http://127.0.0.1:4318", e)
		}
	}
	if r := f.OTLP.SampleRatio; r != nil {
		if *r <= 0 || *r > 1 {
			p.add(p.line("telemetry", "otlp", "sample_ratio"), "telemetry.otlp.sample_ratio %v: between 0 (exclusive) and 1", *r)
		} else {
			c.Telemetry.SampleRatio = *r
		}
	}
}
