// Package inproc is the in-process constrained engine: a GGUF model loaded
// through cgo (github.com/ollama/ollama/llama v0.17.4, the llama.cpp
// bindings of the Ollama module AIRS already pins), decoded token by token
// under AIRS's own token masks.
//
// Each step the request's grammar (grammar.TokenMatcher over the GGUF's
// vocabulary) gives the set of allowed tokens, the disallowed logits are
// dropped, a token is sampled (temperature, top-k, top-p, seed) and the
// matcher advances; generation stops when the grammar accepts. Where the
// automaton admits exactly one continuation (keys, punctuation, the rest of
// a unique tool name, closing brackets) the forced bytes are tokenized
// canonically and appended in one batched decode instead of being sampled
// one by one (fast-forward). The mask of the next step is computed while
// the forward pass of the current token runs.
//
// The decode loop (Engine) runs over a Backend interface and is pure Go,
// so its tests run in `make test`; the llama.cpp Backend (Open) exists only
// with the build tag `inproc` (cgo). Built without it, Open returns
// ErrNotBuilt, which says how to build it.
package inproc
