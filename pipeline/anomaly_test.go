package pipeline

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// fixedScorer scores a call by its tool's name and remembers what it saw.
type fixedScorer struct {
	mu     sync.Mutex
	scores map[string]uint8
	seen   []CallFeatures
}

func (s *fixedScorer) ScoreCall(f CallFeatures) (uint8, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, f)
	sc, ok := s.scores[f.Tool]
	if !ok {
		return 0, "" // no model for it
	}
	return sc, "m1"
}

func TestAnomalyThresholdsOf(t *testing.T) {
	if got := DefaultAnomalyThresholds; got != (AnomalyThresholds{204, 230, 243}) {
		t.Fatalf("defaults %v, want 204 230 243 (⌈0.8·255⌉ …)", got)
	}
	for _, x := range []float64{0.8, 0.9, 0.95, 0.5, 0.123, 0.2} {
		th := fixedCeil(x)
		if AnomalyScoreOf(th) < x || (th > 0 && float64(th-1)/255 >= x) {
			t.Errorf("%v → %d: not the least score at or above it", x, th)
		}
	}
	th := DefaultAnomalyThresholds
	for s, want := range map[uint8]AnomalyLevel{0: AnomalyNone, 203: AnomalyNone, 204: AnomalyWarn, 229: AnomalyWarn,
		230: AnomalyReview, 242: AnomalyReview, 243: AnomalyBlock, 255: AnomalyBlock} {
		if got := th.Level(s); got != want {
			t.Errorf("score %d: %v, want %v", s, got, want)
		}
	}
}

// The hook: the score's level reaches the gate, its value and model the
// audit record; a call refused before the schema stage passed is not
// scored; with no gate a blocked call is refused and a reviewed one goes on.
func TestAnomalyHook(t *testing.T) {
	for _, withGate := range []bool{true, false} {
		sc := &fixedScorer{scores: map[string]uint8{"plain": 10, "warn": 210, "review": 235, "block": 250}}
		var gated []IntentCheck
		var mu sync.Mutex
		e := newEnv(t, func(c *Config) {
			c.Scorer = sc
			if withGate {
				c.Gate = gateFunc(func(_ context.Context, ch IntentCheck) (IntentDecision, error) {
					mu.Lock()
					gated = append(gated, ch)
					mu.Unlock()
					switch ch.Anomaly {
					case AnomalyBlock:
						return IntentDecision{Decision: IntentRequired, Review: "cf-9"}, &IntentVerificationRequired{ID: "cf-9"}
					case AnomalyReview:
						return IntentDecision{Decision: IntentQueued, Review: "rv-9"}, nil
					}
					return IntentDecision{}, nil
				})
			}
		})
		for _, n := range []string{"plain", "warn", "review", "block", "unscored"} {
			tl := tool(n)
			tl.Parameters = objSchema(`{"n":{"type":"integer"}}`)
			e.register(t, "p", tl, echo)
		}
		want := map[string]struct {
			level  AnomalyLevel
			score  float64
			intent string
			err    error
		}{
			"plain":  {AnomalyNone, 0.039, "", nil},
			"warn":   {AnomalyWarn, 0.824, "", nil},
			"review": {AnomalyReview, 0.922, IntentQueued, nil},
			"block":  {AnomalyBlock, 0.98, IntentRequired, ErrIntentVerificationRequired},
		}
		if !withGate {
			for _, k := range []string{"review", "block"} {
				w := want[k]
				w.intent = ""
				if k == "block" {
					w.err = ErrIntentMisaligned
				}
				want[k] = w
			}
		}
		for name, w := range want {
			_, err := e.call(name, `{"n":1}`)
			if !errors.Is(err, w.err) && !(err == nil && w.err == nil) {
				t.Fatalf("gate %v, %s: %v, want %v", withGate, name, err, w.err)
			}
			r := e.audit.last()
			if r.AnomalyModel != "m1" || r.AnomalyScore == nil || *r.AnomalyScore != w.score || r.Intent != w.intent {
				t.Fatalf("gate %v, %s: record %+v score %v, want %v %q", withGate, name, r, r.AnomalyScore, w.score, w.intent)
			}
			if r.ParamsBytes != len(`{"n":1}`) {
				t.Fatalf("params_bytes %d", r.ParamsBytes)
			}
			if withGate {
				g := gated[len(gated)-1]
				if g.Tool.Name != name || g.Anomaly != w.level || g.AnomalyModel != "m1" {
					t.Fatalf("%s: the gate saw %v %q, want %v", name, g.Anomaly, g.AnomalyModel, w.level)
				}
			}
		}
		before := len(sc.seen)
		if _, err := e.call("warn", `{"n":"x"}`); !errors.Is(err, ErrSchemaValidationFailed) {
			t.Fatal(err)
		}
		if len(sc.seen) != before || e.audit.last().AnomalyModel != "" {
			t.Fatal("a call refused by the schema stage was scored")
		}
		if _, err := e.call("unscored", `{"n":1}`); err != nil {
			t.Fatal(err)
		}
		if r := e.audit.last(); r.AnomalyModel != "" || r.AnomalyScore != nil {
			t.Fatalf("no model, yet the record has %+v", r)
		}
		f := sc.seen[len(sc.seen)-1]
		if f.Caller != "alice" || f.Provider != "p" || f.ParamSizeBytes != 7 || !f.At.Equal(e.clock.Now()) {
			t.Fatalf("scorer saw %+v", f)
		}
	}
}
