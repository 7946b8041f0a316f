package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// cpuTime is the process's CPU time so far, user + system (getrusage): what
// a handler that ignores its context keeps adding to after its call has
// been answered.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// builtinManager is a Manager over the builtin tools with spaces, a payload
// limit that lets compare's two largest texts through, and no breaker (the
// tests time calls out on purpose).
func builtinManager(t *testing.T, spaces map[string]string) *pipeline.Manager {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := Register(reg, Options{Spaces: spaces, Policy: testPolicy}); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: testPolicy, MaxPayload: 8 << 20,
		Breaker: pipeline.BreakerConfig{Failures: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// lines writes lines from gen until the text would pass size bytes.
func lines(size int, gen func(i int) string) string {
	var sb strings.Builder
	for i := 0; ; i++ {
		l := gen(i)
		if sb.Len()+len(l)+1 > size {
			return sb.String()
		}
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
}

// compareWorst is one of compare's costliest inputs at its largest size:
// "alphabet", short lines over a small alphabet (many matches, an edit
// distance near N+M: Myers' worst case, bounded by the work budget);
// "permuted", a permutation (no unique line to discard); "prices", rows
// full of numbers that all changed; "one line", one huge line of numbers.
func compareWorst(shape string) [2]string {
	r := rand.New(rand.NewPCG(7, 8))
	switch shape {
	case "alphabet":
		letter := func(int) string { return string(rune('a' + r.IntN(3))) }
		return [2]string{lines(compareMaxChars, letter), lines(compareMaxChars, letter)}
	case "permuted":
		perm := lines(compareMaxChars, func(i int) string { return fmt.Sprintf("row %d", i) })
		ls := strings.Split(strings.TrimSuffix(perm, "\n"), "\n")
		r.Shuffle(len(ls), func(i, j int) { ls[i], ls[j] = ls[j], ls[i] })
		return [2]string{perm, strings.Join(ls, "\n")}
	case "prices":
		price := func(int) string {
			return fmt.Sprintf("Plan %c: $%d.%02d per month", 'A'+r.IntN(26), r.IntN(10000), r.IntN(100))
		}
		return [2]string{lines(compareMaxChars, price), lines(compareMaxChars, price)}
	case "one line":
		return [2]string{strings.Repeat("$1,234.50 ", compareMaxChars/10), strings.Repeat("$1,234.51 ", compareMaxChars/10)}
	}
	panic("no shape " + shape)
}

// summarizeWorst is summarize's costliest input at its largest size: more
// sentences than TextRank ranks, all sharing content words (a dense graph).
func summarizeWorst() string {
	r := rand.New(rand.NewPCG(9, 10))
	words := strings.Fields("price plan cloud storage support contract customer invoice month year discount " +
		"service account report revenue growth market product team quarter")
	var sb strings.Builder
	for sb.Len() < summarizeMaxChars-300 {
		n := 8 + r.IntN(12)
		for i := range n {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		sb.WriteString(". ")
	}
	return sb.String()
}

// bigPDF is a PDF of about size bytes of uncompressed text pages, every
// page the same (built once: under the race detector, formatting 64 MB
// line by line takes longer than the test).
func bigPDF(size int) []byte {
	var content bytes.Buffer
	content.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for range 400 {
		content.WriteString("(Pro plan costs $30 per month, Basic plan $10, Enterprise $1,150 per year; storage 0.02 per GB.) Tj T*\n")
	}
	content.WriteString("ET")
	n := max(size/(content.Len()+200), 1)
	var b bytes.Buffer
	b.Grow(size + size/10)
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, 0, 3+2*n)
	obj := func(body ...string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n", len(offsets))
		for _, s := range body {
			b.WriteString(s)
		}
		b.WriteString("\nendobj\n")
	}
	kids := make([]string, n)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	stream, text := fmt.Sprintf("<< /Length %d >>\nstream\n", content.Len()), content.String()
	for i := range n {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		obj(stream, text, "\nendstream")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

type stopCase struct {
	tool   string
	params map[string]any
}

func stopCases(t *testing.T, dir string) []stopCase {
	t.Helper()
	w := compareWorst("alphabet")
	writeFile(t, filepath.Join(dir, "big.pdf"), bigPDF(8<<20))
	writeFile(t, filepath.Join(dir, "big.txt"), []byte(strings.Repeat("Pro plan: $30 per month, basic $10.\n", readMaxMax/36)))
	makeTree(t, filepath.Join(dir, "tree"), 20) // 20,000 entries: a walk of seconds under -race
	return []stopCase{
		{"list-files", map[string]any{"space": "documents", "dir": "tree", "pattern": "*.none", "recursive": true}},
		{"read-file", map[string]any{"space": "documents", "path": "big.txt", "max_bytes": readMaxMax}},
		{"compare", map[string]any{"a": w[0], "b": w[1]}},
		{"summarize", map[string]any{"text": summarizeWorst(), "max_words": 2000}},
		{"pdf-extract", map[string]any{"space": "documents", "path": "big.pdf", "max_chars": pdfMaxMaxChars}},
	}
}

// endsAtCheck is a call's context that ends itself at the handler's
// at-th look at Err after decoding its parameters: while the handler works,
// by construction, however fast this machine gets through the input (a
// timer set for "mid-way" fires after the end of a short job on a quiet
// machine, or late on a busy one).
type endsAtCheck struct {
	context.Context
	at    int32 // 0: never
	end   func()
	armed atomic.Bool  // set once the parameters are decoded
	seen  atomic.Int32 // Err calls since
}

func (c *endsAtCheck) Err() error {
	if c.armed.Load() && c.seen.Add(1) == c.at {
		c.end()
	}
	return c.Context.Err()
}

// checksOf counts the context checks one whole call of h makes after
// decoding its parameters.
func checksOf(h pipeline.Handler, params json.RawMessage, tool string) int32 {
	ctx := &endsAtCheck{}
	ctx.Context = context.WithValue(context.Background(), endAfterDecode{}, func() { ctx.armed.Store(true) })
	_, _ = h.Invoke(ctx, params, &pipeline.Call{ID: "count", Tool: tool, Provider: ProviderID, Caller: "root"})
	return ctx.seen.Load()
}

// endAfterDecode is the context key of the function testHookDecoded calls.
type endAfterDecode struct{}

// After a cancellation the work stops, not only the answer: four calls of
// each long-running builtin handler run at once on its costliest input;
// each context ends while its handler works (at the middle one of the
// context checks a whole call makes after decoding its parameters, counted
// first — endsAtCheck — or 50 ms after decoding for a handler that checks
// none; testHookDecoded marks
// the decoding's end: decoding is bounded by the payload limit and not
// interruptible); each call must return context.Canceled, and from 100 ms
// after the last context ended the process's CPU time (getrusage) must
// stand still over a 300 ms window. A handler that ignored its context
// would keep both cores busy for seconds, growing CPU time by about the
// window's length or more. A deadline and a cancellation look the same to
// a handler (ctx.Done); the pipeline's mapping of each to its outcome is
// tested in package pipeline, a real timeout end to end in cmd/airs.
func TestCancelStopsTheWork(t *testing.T) {
	dir := t.TempDir()
	tools := testTools(t, map[string]string{"documents": dir})
	const (
		calls  = 4
		after  = 50 * time.Millisecond  // from decoding to the context's end, for a handler that never checks it
		settle = 100 * time.Millisecond // the contract: stopped within this
		window = 300 * time.Millisecond // CPU must not grow over this
		allow  = 45 * time.Millisecond  // runtime noise: far below one busy core
	)
	testHookDecoded = func(ctx context.Context) {
		if f, ok := ctx.Value(endAfterDecode{}).(func()); ok {
			f()
		}
	}
	defer func() { testHookDecoded = nil }()
	for _, c := range stopCases(t, dir) {
		params, err := json.Marshal(c.params)
		if err != nil {
			t.Fatal(err)
		}
		h := tools[c.tool].Handler
		t.Run(c.tool, func(t *testing.T) {
			checks := checksOf(h, params, c.tool)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var lastEnd time.Time // when the last context ended
			ended := make(chan struct{}, calls)
			errs := make([]error, calls)
			returned := make([]time.Duration, calls)
			ctxs := make([]*endsAtCheck, calls)
			start := time.Now()
			for i := range calls {
				base, cancel := context.WithCancel(context.Background())
				var once sync.Once
				ctx := &endsAtCheck{at: max(2, checks/2), end: func() {
					once.Do(func() {
						cancel()
						mu.Lock()
						lastEnd = time.Now()
						mu.Unlock()
						ended <- struct{}{}
					})
				}}
				ctx.Context = context.WithValue(base, endAfterDecode{}, func() {
					ctx.armed.Store(true)
					time.AfterFunc(after, ctx.end)
				})
				ctxs[i] = ctx
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer cancel()
					_, errs[i] = h.Invoke(ctx, params, &pipeline.Call{ID: "stop", Tool: c.tool, Provider: ProviderID, Caller: "root"})
					returned[i] = time.Since(start)
				}()
			}
			for range calls {
				<-ended
			}
			mu.Lock()
			time.Sleep(time.Until(lastEnd.Add(settle)))
			mu.Unlock()
			// A collection now, so that one the handlers' garbage would
			// start later does not count as their work.
			runtime.GC()
			c0, t0 := cpuTime(t), time.Now()
			time.Sleep(window)
			grew, el := cpuTime(t)-c0, time.Since(t0)
			wg.Wait()
			t.Logf("a whole call checks its context %d times; each ended at check %d; returned after %v; CPU grew %v over %v",
				checks, max(2, checks/2), returned, grew, el)
			if grew > allow {
				t.Errorf("the process used %v of CPU in the %v from %v after the contexts ended: a %s handler is still working",
					grew, el, settle, c.tool)
			}
			for i, err := range errs {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("handler returned %v, want %v: it went on with its work after its context had ended", err, context.Canceled)
				}
				if n := ctxs[i].seen.Load(); n >= checks {
					t.Errorf("the call checked its context %d times, as many as a whole call: it did not stop at check %d", n, ctxs[i].at)
				}
			}
		})
	}
}
