package inproc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/airs-dev/airs/grammar"
)

// Backend is a loaded model: a tokenizer and one sequence of decoding
// state. The llama.cpp backend (llama.go, build tag inproc) is the real
// one; tests use a pure-Go fake.
type Backend interface {
	// Tokenize returns text's tokens; special also adds the model's BOS (if
	// it wants one) and parses special tokens such as <|im_start|>.
	Tokenize(text string, special bool) ([]int, error)
	// Eval appends tokens to the sequence in one batched decode and returns
	// the logits of the last one (NumVocab values, valid until the next Eval).
	Eval(tokens []int) ([]float32, error)
	// Reset starts a new, empty sequence (the llama.cpp backend keeps the
	// cache of the prefix the next prompt shares with the last sequence).
	Reset()
	// NumVocab is the width of the logits.
	NumVocab() int
	// ContextLen is the sequence's capacity in tokens.
	ContextLen() int
	// Piece is what token id decodes to (for the vocabulary check).
	Piece(id int) []byte
}

// Sampling says how a token is drawn from the allowed ones.
type Sampling struct {
	// Temperature 0 (or less) is greedy: the allowed token of largest logit.
	Temperature float64
	// TopK keeps the K allowed tokens of largest logit before top-p
	// (default 40, Ollama's and llama.cpp's default).
	TopK int
	// TopP keeps the smallest set of those whose probability reaches TopP
	// (0 or ≥ 1: all K).
	TopP float64
	Seed uint64
	// MaxTokens bounds the generated tokens (sampled + forced); 0: what is
	// left of the context. Reaching it is ErrRunaway.
	MaxTokens int
	// NoFastForward samples forced tokens one by one like the others
	// (the baseline fast-forward is measured against).
	NoFastForward bool
	// NoPressure turns closing pressure off (the baseline it is measured
	// against; see Constrained).
	NoPressure bool
}

// Result is one generation and where its time went.
type Result struct {
	Text         string        `json:"text"`
	PromptTokens int           `json:"prompt_tokens"`
	PromptReused int           `json:"prompt_reused_tokens"` // of those, kept from the last sequence's cache
	Sampled      int           `json:"sampled_tokens"`       // drawn from a mask
	Forced       int           `json:"forced_tokens"`        // appended by fast-forward
	Evals        int           `json:"decodes"`              // batched decodes (the prompt's is one)
	Total        time.Duration `json:"total_ns"`
	Prefill      time.Duration `json:"prefill_ns"`      // the first decode (prompt + the forced prefix)
	MaskTime     time.Duration `json:"mask_ns"`         // computing masks and forced bytes
	MaskExposed  time.Duration `json:"mask_exposed_ns"` // mask time not hidden behind a forward pass
	// Pressed counts the tokens sampled under closing pressure (see
	// Constrained): past half the token budget, tokens that open a
	// container are left out of the mask wherever another token is allowed.
	Pressed int `json:"pressed_tokens,omitempty"`
}

// ForcedFraction is the share of generated tokens fast-forward appended.
func (r *Result) ForcedFraction() float64 {
	if n := r.Sampled + r.Forced; n > 0 {
		return float64(r.Forced) / float64(n)
	}
	return 0
}

var (
	// ErrRunaway is a generation that reached MaxTokens (or the context)
	// before the grammar accepted.
	ErrRunaway = errors.New("inproc: generation reached its token limit before the grammar accepted")
	// ErrDeadEnd is a step where the grammar allows no token of the
	// vocabulary (a grammar the vocabulary cannot finish).
	ErrDeadEnd = errors.New("inproc: the grammar allows no token of the vocabulary here")
)

// Engine decodes under grammars over one Backend. One generation runs at a
// time (the backend has one sequence); Generate calls queue.
type Engine struct {
	b     Backend
	vocab *grammar.Vocab
	ti    *grammar.TokenizerInfo
	eos   []bool
	// opens marks the tokens with a '{' or '[' byte: what closing
	// pressure leaves out; closes those with a '}' or ']' byte and the
	// EOS ids: what it prefers late in the budget.
	opens, closes []uint64
	// free is the mask of unconstrained chat: every ordinary token and the
	// end-of-generation ones (eog), no other control token (a chat answer
	// never needs <|im_start|> and its kind, and a random-weight model
	// would otherwise draw them).
	free []uint64
	eog  []bool
	// tmpl renders prompts (template.go); zero: ChatML.
	tmpl       Template
	tmplNotice string
	mu         sync.Mutex
}

// endOfTurn are the control tokens that end an assistant's turn in the
// chat templates AIRS renders, beside the GGUF's EOS/EOT ids.
var endOfTurn = []string{"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "</s>", "<|end|>", "<eos>"}

// New checks that vocab (read from the GGUF) is the backend tokenizer's
// vocabulary and returns an engine over both.
func New(b Backend, vocab *grammar.Vocab) (*Engine, error) {
	if err := checkVocab(b, vocab); err != nil {
		return nil, err
	}
	e := &Engine{b: b, vocab: vocab, ti: grammar.NewTokenizerInfo(vocab), eos: make([]bool, len(vocab.Tokens))}
	for _, id := range vocab.EOS {
		e.eos[id] = true
	}
	e.opens = make([]uint64, e.ti.MaskWords())
	e.closes = make([]uint64, e.ti.MaskWords())
	e.eog = slices.Clone(e.eos)
	e.free = make([]uint64, e.ti.MaskWords())
	for id, t := range vocab.Tokens {
		if slices.Contains(t, '{') || slices.Contains(t, '[') {
			e.opens[id>>6] |= 1 << (id & 63)
		}
		if slices.Contains(t, '}') || slices.Contains(t, ']') || e.eos[id] {
			e.closes[id>>6] |= 1 << (id & 63)
		}
		special := id < len(vocab.Special) && vocab.Special[id]
		if special && slices.Contains(endOfTurn, string(t)) {
			e.eog[id] = true
		}
		if e.eog[id] || !special && len(t) > 0 {
			e.free[id>>6] |= 1 << (id & 63)
		}
	}
	return e, nil
}

// checkVocab compares the GGUF's vocabulary with what the backend's
// tokenizer decodes: the sizes, and the pieces of a spread of ordinary
// tokens (a mask computed over one vocabulary and applied to another's
// logits would allow the wrong tokens).
func checkVocab(b Backend, v *grammar.Vocab) error {
	if n := b.NumVocab(); n != len(v.Tokens) {
		return fmt.Errorf("inproc: the model's vocabulary does not match its tokenizer: the GGUF lists %d tokens, the model has %d logits", len(v.Tokens), n)
	}
	n := len(v.Tokens)
	step := max(1, n/512)
	bad, checked := 0, 0
	first := -1
	for id := 0; id < n; id += step {
		if id < len(v.Special) && v.Special[id] || len(v.Tokens[id]) == 0 || slices.Contains(v.Tokens[id], 0) {
			continue
		}
		checked++
		if string(b.Piece(id)) != string(v.Tokens[id]) {
			bad++
			if first < 0 {
				first = id
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("inproc: the model's vocabulary does not match its tokenizer: %d of %d sampled tokens decode differently (token %d: GGUF %q, tokenizer %q)",
			bad, checked, first, v.Tokens[first], b.Piece(first))
	}
	return nil
}

// begin sets up a generation (the caller holds e.mu): the prompt's tokens,
// how many may follow (the rest of the context, at most maxTokens when
// positive) and a reset backend.
func (e *Engine) begin(prompt string, maxTokens int) (ptoks []int, limit int, err error) {
	ptoks, err = e.b.Tokenize(prompt, true)
	if err != nil {
		return nil, 0, fmt.Errorf("inproc: tokenizing the prompt: %w", err)
	}
	limit = e.b.ContextLen() - len(ptoks)
	if limit <= 0 {
		return nil, 0, fmt.Errorf("inproc: the prompt is %d tokens, the context %d: start a new conversation or raise the context length", len(ptoks), e.b.ContextLen())
	}
	if maxTokens > 0 {
		limit = min(limit, maxTokens)
	}
	e.b.Reset()
	return ptoks, limit, nil
}

// reusedPrompt is how many prompt tokens the backend kept from its cache.
func (e *Engine) reusedPrompt() int {
	if r, ok := e.b.(interface{ ReusedPrompt() int }); ok {
		return r.ReusedPrompt()
	}
	return 0
}

// Vocab is the engine's vocabulary.
func (e *Engine) Vocab() *grammar.Vocab { return e.vocab }

type evalResult struct {
	logits []float32
	err    error
	end    time.Time
}

// Constrained generates under g from prompt (which carries the chat
// template's special tokens) until g accepts. onChunk (may be nil) gets
// each sampled token's bytes and each forced run; its error stops
// generation and is returned. The output is checked byte by byte against g
// as it is produced (an assertion: a mask bug is an error, never an output).
func (e *Engine) Constrained(ctx context.Context, prompt string, g *grammar.Grammar, s Sampling, onChunk func(string) error) (*Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t0 := time.Now()
	res := &Result{}
	var out []byte
	// Also when onChunk stops generation (the selector's check says complete).
	defer func() { res.Total, res.Text = time.Since(t0), string(out) }()
	ptoks, limit, err := e.begin(prompt, s.MaxTokens)
	if err != nil {
		return nil, err
	}
	res.PromptTokens = len(ptoks)
	tm := g.NewTokenMatcher(e.ti)
	check := g.NewStreamChecker()
	mask := make([]uint64, e.ti.MaskWords())
	rng := newRand(s.Seed)
	emit := func(p []byte) error {
		out = append(out, p...)
		if _, err := check.Write(p); err != nil {
			return fmt.Errorf("inproc: internal error: the output left the grammar (%w)", err)
		}
		if onChunk != nil {
			return onChunk(string(p))
		}
		return nil
	}
	batch := ptoks
	ch := make(chan evalResult, 1)
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		// Fast-forward: bytes the automaton forces go into this batch.
		if !s.NoFastForward {
			m0 := time.Now()
			for {
				ft := e.forcedTokens(tm)
				if ft == nil {
					break
				}
				var p []byte
				for _, t := range ft {
					p = append(p, e.vocab.Tokens[t]...)
				}
				if err := emit(p); err != nil {
					return res, err
				}
				res.Forced += len(ft)
				batch = append(batch, ft...)
			}
			res.MaskTime += time.Since(m0)
		}
		if res.Sampled+res.Forced > limit {
			return res, ErrRunaway
		}
		if tm.IsAccepting() {
			break
		}
		// The forward pass runs while this goroutine computes the mask of
		// the state the batch leaves the matcher in.
		b := batch
		go func() {
			l, err := e.b.Eval(b)
			ch <- evalResult{l, err, time.Now()}
		}()
		res.Evals++
		m0 := time.Now()
		tm.FillMask(mask)
		m1 := time.Now()
		res.MaskTime += m1.Sub(m0)
		r := <-ch
		if r.err != nil {
			return res, fmt.Errorf("inproc: decode: %w", r.err)
		}
		if m1.After(r.end) {
			res.MaskExposed += m1.Sub(r.end)
		}
		if first {
			res.Prefill, res.PromptReused = time.Since(t0), e.reusedPrompt()
		}
		// Closing pressure. The length bounds (GenerationBounds) bound each
		// string and container, not their nesting: under an open value
		// (any type, recursive definitions) a model that keeps opening
		// containers grows the output geometrically and never finishes
		// (a Debug Adapter Protocol schema ran to 8,192 tokens with random
		// weights). Past half the budget no new container is opened where
		// the grammar allows anything else; the mask only narrows, and
		// every token it keeps leads on to a complete value, so validity
		// is unchanged.
		// Not opening is not enough where an array of objects takes
		// another item at each comma (a recursive list of headers grew past
		// 8,192 tokens so): past three quarters, where a token that closes
		// a container (or ends the output) is allowed, only those are.
		if !s.NoPressure && 2*(res.Sampled+res.Forced) > limit {
			late := 4*(res.Sampled+res.Forced) > 3*limit
			if e.press(mask, late) {
				res.Pressed++
			}
		}
		id := e.sample(r.logits, mask, s, rng)
		if id < 0 {
			return res, ErrDeadEnd
		}
		if !tm.Accept(id) {
			return res, fmt.Errorf("inproc: internal error: token %d was in the mask but the matcher refuses it", id)
		}
		res.Sampled++
		if e.eos[id] {
			break // only allowed once the output is complete
		}
		if err := emit(e.vocab.Tokens[id]); err != nil {
			return res, err
		}
		batch = []int{id}
	}
	if !check.Complete() {
		return res, fmt.Errorf("inproc: internal error: the grammar accepted %q but the stream check does not", out)
	}
	return res, nil
}

// press removes the container-opening tokens from mask unless they are all
// it allows, and late, keeps only the closing ones where there are any; it
// reports whether it narrowed the mask.
func (e *Engine) press(mask []uint64, late bool) bool {
	if late {
		any := false
		for i, w := range mask {
			if w&e.closes[i] != 0 {
				any = true
				break
			}
		}
		if any {
			narrowed := false
			for i := range mask {
				if mask[i]&^e.closes[i] != 0 {
					narrowed = true
				}
				mask[i] &= e.closes[i]
			}
			return narrowed
		}
	}
	rest, cut := false, false
	for i, w := range mask {
		if w&^e.opens[i] != 0 {
			rest = true
		}
		if w&e.opens[i] != 0 {
			cut = true
		}
	}
	if !rest || !cut {
		return false
	}
	for i := range mask {
		mask[i] &^= e.opens[i]
	}
	return true
}

// forcedTokens appends to tm the canonical tokenization of the bytes g
// forces next and returns those tokens; nil (tm unchanged) when nothing is
// forced or the tokenization does not walk the grammar token by token.
func (e *Engine) forcedTokens(tm *grammar.TokenMatcher) []int {
	if tm.IsAccepting() {
		return nil
	}
	f := tm.Forced()
	if len(f) == 0 {
		return nil
	}
	toks, err := e.b.Tokenize(string(f), false)
	if err != nil || len(toks) == 0 {
		return nil
	}
	for i, t := range toks {
		if t < 0 || t >= len(e.vocab.Tokens) || !tm.Accept(t) {
			tm.Rollback(i)
			return nil
		}
	}
	return toks
}

// Free generates from prompt with no grammar (chat answers): tokens are
// drawn over the ordinary tokens and the end-of-generation ones until one
// of those, s.MaxTokens, or the end of the context. onToken gets each
// token's bytes; stop true ends generation there (a stop sequence). The
// reason is "stop" (end of turn, or onToken) or "length".
func (e *Engine) Free(ctx context.Context, prompt string, s Sampling, onToken func(piece []byte) (stop bool, err error)) (*Result, string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t0 := time.Now()
	res := &Result{}
	var out []byte
	defer func() { res.Total, res.Text = time.Since(t0), string(out) }()
	ptoks, limit, err := e.begin(prompt, s.MaxTokens)
	if err != nil {
		return res, "", err
	}
	res.PromptTokens = len(ptoks)
	rng := newRand(s.Seed)
	batch := ptoks
	for res.Sampled < limit {
		if err := ctx.Err(); err != nil {
			return res, "", err
		}
		l, err := e.b.Eval(batch)
		if err != nil {
			return res, "", fmt.Errorf("inproc: decode: %w", err)
		}
		res.Evals++
		if res.Evals == 1 {
			res.Prefill, res.PromptReused = time.Since(t0), e.reusedPrompt()
		}
		id := e.sample(l, e.free, s, rng)
		if id < 0 {
			return res, "", ErrDeadEnd
		}
		res.Sampled++
		if e.eog[id] {
			return res, "stop", nil
		}
		p := e.vocab.Tokens[id]
		out = append(out, p...)
		if onToken != nil {
			stop, err := onToken(p)
			if err != nil {
				return res, "", err
			}
			if stop {
				return res, "stop", nil
			}
		}
		batch = []int{id}
	}
	return res, "length", nil
}

// Unconstrained decodes n tokens from prompt with no grammar (sampling over
// the whole vocabulary), the baseline for the per-token cost of masks.
func (e *Engine) Unconstrained(ctx context.Context, prompt string, n int, s Sampling) (*Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t0 := time.Now()
	ptoks, err := e.b.Tokenize(prompt, true)
	if err != nil {
		return nil, err
	}
	if len(ptoks)+n > e.b.ContextLen() {
		return nil, fmt.Errorf("inproc: %d prompt + %d tokens exceed the context %d", len(ptoks), n, e.b.ContextLen())
	}
	e.b.Reset()
	res := &Result{PromptTokens: len(ptoks)}
	all := make([]uint64, e.ti.MaskWords())
	for i := range all {
		all[i] = ^uint64(0)
	}
	rng := newRand(s.Seed)
	batch := ptoks
	var out []byte
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		l, err := e.b.Eval(batch)
		if err != nil {
			return res, err
		}
		res.Evals++
		if i == 0 {
			res.Prefill, res.PromptReused = time.Since(t0), e.reusedPrompt()
		}
		id := e.sample(l, all, s, rng)
		res.Sampled++
		out = append(out, e.vocab.Tokens[id]...)
		batch = []int{id}
	}
	res.Text = string(out)
	res.Total = time.Since(t0)
	return res, nil
}

type cand struct {
	id int
	l  float32
}

// sample draws an allowed token (a set bit of mask below len(logits)), or
// -1 when none is.
func (e *Engine) sample(logits []float32, mask []uint64, s Sampling, rng *rand.Rand) int {
	n := len(logits)
	if s.Temperature <= 0 {
		best, bl := -1, float32(math.Inf(-1))
		forEach(mask, n, func(id int) {
			if best < 0 || logits[id] > bl {
				best, bl = id, logits[id]
			}
		})
		return best
	}
	k := s.TopK
	if k <= 0 {
		k = 40
	}
	// A min-heap of the k largest allowed logits.
	h := make([]cand, 0, k)
	forEach(mask, n, func(id int) {
		l := logits[id]
		if len(h) < k {
			h = append(h, cand{id, l})
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if h[p].l <= h[i].l {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			return
		}
		if l <= h[0].l {
			return
		}
		h[0] = cand{id, l}
		for i := 0; ; {
			c := 2*i + 1
			if c >= len(h) {
				break
			}
			if c+1 < len(h) && h[c+1].l < h[c].l {
				c++
			}
			if h[i].l <= h[c].l {
				break
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	})
	if len(h) == 0 {
		return -1
	}
	slices.SortFunc(h, func(a, b cand) int {
		switch {
		case a.l > b.l:
			return -1
		case a.l < b.l:
			return 1
		}
		return a.id - b.id
	})
	p := make([]float64, len(h))
	sum := 0.0
	for i, c := range h {
		p[i] = math.Exp(float64(c.l-h[0].l) / s.Temperature)
		sum += p[i]
	}
	keep := len(h)
	if s.TopP > 0 && s.TopP < 1 {
		acc := 0.0
		for i := range p {
			acc += p[i] / sum
			if acc >= s.TopP {
				keep = i + 1
				break
			}
		}
		sum = 0
		for i := 0; i < keep; i++ {
			sum += p[i]
		}
	}
	r := rng.Float64() * sum
	for i := 0; i < keep; i++ {
		r -= p[i]
		if r < 0 {
			return h[i].id
		}
	}
	return h[keep-1].id
}

// forEach calls f for each set bit of mask below n, in increasing order.
func forEach(mask []uint64, n int, f func(int)) {
	for w, word := range mask {
		for word != 0 {
			id := w<<6 + bits.TrailingZeros64(word)
			if id >= n {
				return
			}
			f(id)
			word &= word - 1
		}
	}
}

// newRand is a generation's random source: the same seed, the same draws.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
