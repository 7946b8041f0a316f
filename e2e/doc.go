// Package e2e holds the end-to-end tests (build tag e2e) that run against a
// real Ollama server built from its Go module, with the tiny model of
// internal/tinymodel. Run them with `make e2e` (scripts/e2e.sh); without the
// tag this package is empty.
package e2e
