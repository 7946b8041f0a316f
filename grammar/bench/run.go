package bench

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/grammar"
)

// Statuses of a schema run (the peer's vocabulary).
const (
	StatusOK                = "ok"
	StatusValidationError   = "validation_error"   // a valid instance was rejected
	StatusInvalidationError = "invalidation_error" // all valid accepted, an invalid one accepted
	StatusCompileError      = "compile_error"
	StatusTimeout           = "timeout"
	StatusCrash             = "crash" // the engine panicked
	StatusTestError         = "test_error"
	StatusInputError        = "input_error" // the record could not be read; not counted
)

// Failure is one instance that went the wrong way.
type Failure struct {
	Test int    `json:"test"`
	At   int    `json:"at"` // token position (of Of tokens); Of = end of input
	Of   int    `json:"of"`
	Why  string `json:"why"` // masked | stop_masked | accepted | mismatch
}

// SchemaResult is the per-schema line.
type SchemaResult struct {
	ID                     string    `json:"id"`
	File                   string    `json:"file"`
	Status                 string    `json:"status"`
	Compiled               bool      `json:"compiled"`
	CompileMS              float64   `json:"compile_ms"`
	Tokens                 int       `json:"tokens"`
	Masks                  int       `json:"masks"`
	MaskP50                float64   `json:"mask_us_p50"`
	MaskP99                float64   `json:"mask_us_p99"`
	MaskP999               float64   `json:"mask_us_p99_9"`
	MaskMax                float64   `json:"mask_us_max"`
	ValidAccepted          int       `json:"valid_accepted"`
	ValidTotal             int       `json:"valid_total"`
	InvalidRejected        int       `json:"invalid_rejected"`
	InvalidTotal           int       `json:"invalid_total"`
	InvalidRejectedAtToken int       `json:"invalid_rejected_at_token"`
	Mismatch               int       `json:"mismatch,omitempty"`
	Loosened               int       `json:"loosened,omitempty"`
	Error                  string    `json:"error,omitempty"`
	Failures               []Failure `json:"failures,omitempty"`
	WallMS                 float64   `json:"wall_ms"`

	maskUS []float64
}

// Passing is MaskBench's definition: compiled, no timeout or crash, every
// valid instance accepted and every invalid one rejected.
func (r *SchemaResult) Passing() bool { return r.Status == StatusOK }

// testsRan reports whether all the schema's tests ran to an answer.
func (r *SchemaResult) testsRan() bool {
	switch r.Status {
	case StatusOK, StatusValidationError, StatusInvalidationError:
		return true
	}
	return false
}

// Runner runs schemas MaskBench-style over one vocabulary.
type Runner struct {
	Vocab   *grammar.Vocab
	TI      *grammar.TokenizerInfo
	Tok     *GreedyTokenizer
	Options grammar.Options
	Timeout time.Duration // per schema: compile plus every walk; default 10 s
}

// NewRunner prepares the tokenizer info and the greedy tokenizer of v.
func NewRunner(v *grammar.Vocab, opts grammar.Options) *Runner {
	return &Runner{Vocab: v, TI: grammar.NewTokenizerInfo(v), Tok: NewGreedyTokenizer(v), Options: opts, Timeout: 10 * time.Second}
}

// Run runs one record. A run that exceeds the timeout is abandoned (its
// goroutine stops at the next token boundary) and reported as a timeout.
func (rn *Runner) Run(rec *Record) *SchemaResult {
	start := time.Now()
	p, err := rec.Parse()
	if err != nil {
		return &SchemaResult{ID: rec.ID, File: rec.File, Status: StatusInputError, Error: err.Error()}
	}
	timeout := rn.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	var abort atomic.Bool
	done := make(chan *SchemaResult, 1)
	go func() {
		res := &SchemaResult{ID: rec.ID, File: rec.File}
		defer func() {
			if e := recover(); e != nil {
				res.Status = StatusCrash
				res.Error = fmt.Sprintf("panic: %v\n%s", e, firstLines(string(debug.Stack()), 12))
			}
			done <- res
		}()
		rn.run(p, res, &abort)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		res.WallMS = ms(time.Since(start))
		return res
	case <-timer.C:
		abort.Store(true)
		return &SchemaResult{ID: rec.ID, File: rec.File, Status: StatusTimeout,
			Error: fmt.Sprintf("over %v", timeout), WallMS: ms(time.Since(start))}
	}
}

func (rn *Runner) run(p *Parsed, res *SchemaResult, abort *atomic.Bool) {
	t0 := time.Now()
	g, err := grammar.Compile(p.Schema, rn.Options)
	res.CompileMS = ms(time.Since(t0))
	if err != nil {
		res.Status = StatusCompileError
		res.Error = err.Error()
		return
	}
	res.Compiled = true
	res.Loosened = len(g.Loosened)
	tm := g.NewTokenMatcher(rn.TI)
	bits := make([]uint64, rn.TI.MaskWords())
	for k, t := range p.Tests {
		if abort.Load() {
			return
		}
		toks, err := rn.Tok.Encode(t.Data)
		if err != nil {
			res.Status = StatusTestError
			res.Error = fmt.Sprintf("test #%d: %v", k, err)
			return
		}
		tm.Reset()
		res.Tokens += len(toks)
		accepted, at, why := rn.walk(tm, toks, bits, res, abort)
		if abort.Load() {
			return
		}
		if t.Valid {
			res.ValidTotal++
			if accepted {
				res.ValidAccepted++
			} else if len(res.Failures) < 3 {
				res.Failures = append(res.Failures, Failure{Test: k, At: at, Of: len(toks), Why: why})
			}
		} else {
			res.InvalidTotal++
			if !accepted {
				res.InvalidRejected++
				if at < len(toks) {
					res.InvalidRejectedAtToken++
				}
			} else if len(res.Failures) < 3 {
				res.Failures = append(res.Failures, Failure{Test: k, At: len(toks), Of: len(toks), Why: "accepted"})
			}
		}
		if why == "mismatch" {
			res.Mismatch++
		}
	}
	switch {
	case res.ValidAccepted < res.ValidTotal:
		res.Status = StatusValidationError
	case res.InvalidRejected < res.InvalidTotal:
		res.Status = StatusInvalidationError
	default:
		res.Status = StatusOK
	}
	if len(res.maskUS) > 0 {
		s := Summarize(append([]float64(nil), res.maskUS...))
		res.MaskP50, res.MaskP99, res.MaskP999, res.MaskMax = s.P50, s.P99, s.P999, s.Max
	}
}

// walk feeds toks through tm, filling (and timing) the mask before every
// token and once more at the end, where an EOS token must be allowed. It
// returns whether the whole instance was accepted, else the token position
// where it was refused and why.
func (rn *Runner) walk(tm *grammar.TokenMatcher, toks []int32, bits []uint64, res *SchemaResult, abort *atomic.Bool) (bool, int, string) {
	for i, id := range toks {
		if abort.Load() {
			return false, i, "aborted"
		}
		t := time.Now()
		tm.FillMask(bits)
		res.maskUS = append(res.maskUS, us(time.Since(t)))
		res.Masks++
		if bits[id>>6]>>(uint(id)&63)&1 == 0 {
			return false, i, "masked"
		}
		if !tm.Accept(int(id)) {
			return false, i, "mismatch"
		}
	}
	t := time.Now()
	tm.FillMask(bits)
	res.maskUS = append(res.maskUS, us(time.Since(t)))
	res.Masks++
	for _, e := range rn.Vocab.EOS {
		if bits[e>>6]>>(uint(e)&63)&1 != 0 {
			if !tm.IsAccepting() {
				return false, len(toks), "mismatch"
			}
			return true, len(toks), ""
		}
	}
	return false, len(toks), "stop_masked"
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func firstLines(s string, n int) string {
	k := 0
	for i := range len(s) {
		if s[i] == '\n' {
			k++
			if k == n {
				return s[:i]
			}
		}
	}
	return s
}
