package config

import (
	"strings"
	"testing"
)

func TestModelEngine(t *testing.T) {
	c, err := Parse("", nil)
	if err != nil || c.Model.Engine != EngineOllama || c.Model.GGUF != "" {
		t.Fatalf("default: %+v, %v", c.Model, err)
	}
	c, err = Parse("airs.yaml", []byte("home: /tmp/h\nmodel:\n  engine: inproc\n  gguf: /models/q.gguf\n"))
	if err != nil || c.Model.Engine != EngineInproc || c.Model.GGUF != "/models/q.gguf" {
		t.Fatalf("inproc: %+v, %v", c.Model, err)
	}
	c, err = Parse("airs.yaml", []byte("model:\n  engine: inproc\n  name: qwen3:4b\n"))
	if err != nil || c.Model.Engine != EngineInproc || c.Model.Name != "qwen3:4b" || c.Model.GGUF != "" {
		t.Fatalf("inproc by name: %+v, %v", c.Model, err)
	}
	c, err = Parse("airs.yaml", []byte("model:\n  engine: inproc\n  name: qwen3:4b\n  threads: 2\n"))
	if err != nil || c.Model.Threads != 2 {
		t.Fatalf("model.threads 2: %+v, %v", c.Model, err)
	}
	for yaml, want := range map[string]string{
		"model:\n  engine: inproc\n  name: q\n  threads: -1\n":  "model.threads -1: want 0 (the default) or a number of threads",
		"model:\n  engine: llama\n":                             `model.engine "llama": want ollama or inproc`,
		"model:\n  engine: inproc\n":                            "model.engine inproc needs the model: model.gguf (a GGUF file) or model.name",
		"model:\n  engine: inproc\n  gguf: a.gguf\n  name: q\n": "model.gguf and model.name both name the model",
	} {
		if _, err := Parse("airs.yaml", []byte(yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yaml, err, want)
		}
	}
}
