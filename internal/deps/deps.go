//go:build tools

// Package deps pins the project's chosen dependencies in go.mod before every
// package that uses them exists, so parallel work never races on go.mod.
package deps

import (
	_ "github.com/creack/pty"
	_ "github.com/dlclark/regexp2"
	_ "github.com/ledongthuc/pdf"
	_ "github.com/ollama/ollama/api"
	_ "github.com/philippgille/chromem-go"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/vmihailenco/msgpack/v5"
	_ "go.uber.org/goleak"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/plot"
)
