// Package traffic is a documented model of normal tool traffic, with the
// seed's anomalies injected, for evaluating the anomaly detector.
//
// The model: three human agents (alice, bob, carol; trust 2) work 8–19h
// UTC, weekdays, about 40 calls a day each, each with its own tool habits
// (alice reads and searches, bob writes and lists, carol searches and
// summarises); dave (trust 1) reads about 5 files a day during the
// working day; backup-bot (trust 1) runs at 02:00 every day, listing and
// reading ~30 files in a few minutes; report-bot (trust 1) runs at 06:00 and
// 18:00, searching and reading ~10 times. Param sizes are per tool
// (a path ~40–120 bytes, a write ~200–2000). Anomalies: burst (dave reading
// 500 files in one minute), novel (an agent calling send-email, which no
// agent's habits include), off-hours (a bot running at an hour it never
// runs).
package traffic

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/airs-dev/airs/guard/anomaly"
)

// Call is one generated call.
type Call struct {
	At     time.Time
	Caller string
	Tool   string
	Size   int
}

type agent struct {
	name   string
	trust  int
	tools  []string // habits, by weight (repeat a tool to weigh it)
	perDay int
	human  bool
	hours  []int // bots: the hours they run
}

var agents = []agent{
	{name: "alice", trust: 2, human: true, perDay: 40, tools: []string{"read-file", "read-file", "read-file", "search", "search", "list-dir"}},
	{name: "bob", trust: 2, human: true, perDay: 40, tools: []string{"write-file", "write-file", "list-dir", "read-file", "delete-file"}},
	{name: "carol", trust: 2, human: true, perDay: 40, tools: []string{"search", "search", "summarize", "read-file"}},
	{name: "dave", trust: 1, human: true, perDay: 5, tools: []string{"read-file"}},
	{name: "backup-bot", trust: 1, perDay: 30, hours: []int{2}, tools: []string{"list-dir", "read-file", "read-file", "read-file"}},
	{name: "report-bot", trust: 1, perDay: 10, hours: []int{6, 18}, tools: []string{"search", "read-file"}},
}

func size(rng *rand.Rand, tool string) int {
	switch tool {
	case "write-file":
		return 200 + rng.IntN(1800)
	case "send-email":
		return 150 + rng.IntN(400)
	case "search", "summarize":
		return 30 + rng.IntN(90)
	}
	return 40 + rng.IntN(80)
}

// Normal generates days of normal traffic from start, sorted by time.
func Normal(start time.Time, days int, seed uint64) []Call {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []Call
	for d := 0; d < days; d++ {
		day := start.AddDate(0, 0, d)
		weekend := day.Weekday() == time.Saturday || day.Weekday() == time.Sunday
		for _, a := range agents {
			if a.human {
				if weekend {
					continue
				}
				n := a.perDay/2 + rng.IntN(a.perDay+1)
				for i := 0; i < n; i++ {
					at := day.Add(8*time.Hour + time.Duration(rng.Int64N(int64(11*time.Hour))))
					t := a.tools[rng.IntN(len(a.tools))]
					out = append(out, Call{At: at, Caller: a.name, Tool: t, Size: size(rng, t)})
				}
				continue
			}
			for _, h := range a.hours {
				out = append(out, botRun(rng, a, day.Add(time.Duration(h)*time.Hour))...)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// botRun is one run of a bot: its calls spread over a few minutes.
func botRun(rng *rand.Rand, a agent, at time.Time) []Call {
	n := a.perDay*3/4 + rng.IntN(a.perDay/2+1)
	at = at.Add(time.Duration(rng.IntN(10)) * time.Minute)
	out := make([]Call, n)
	for i := range out {
		t := a.tools[rng.IntN(len(a.tools))]
		out[i] = Call{At: at.Add(time.Duration(i) * 8 * time.Second), Caller: a.name, Tool: t, Size: size(rng, t)}
	}
	return out
}

// Burst is dave reading n files within one minute from at.
func Burst(at time.Time, n int, seed uint64) []Call {
	rng := rand.New(rand.NewPCG(seed, 11))
	out := make([]Call, n)
	for i := range out {
		out[i] = Call{At: at.Add(time.Duration(i) * time.Minute / time.Duration(n)), Caller: "dave", Tool: "read-file", Size: size(rng, "read-file")}
	}
	return out
}

// Novel is one send-email call by each agent, at a time it normally works.
func Novel(day time.Time, seed uint64) []Call {
	rng := rand.New(rand.NewPCG(seed, 13))
	var out []Call
	for _, a := range agents {
		h := 10
		if !a.human {
			h = a.hours[0]
		}
		out = append(out, Call{At: day.Add(time.Duration(h)*time.Hour + time.Duration(rng.IntN(50))*time.Minute),
			Caller: a.name, Tool: "send-email", Size: size(rng, "send-email")})
	}
	return out
}

// OffHours is one run of each bot at an hour it never runs.
func OffHours(day time.Time, hour int, seed uint64) []Call {
	rng := rand.New(rand.NewPCG(seed, 17))
	var out []Call
	for _, a := range agents {
		if a.human {
			continue
		}
		out = append(out, botRun(rng, a, day.Add(time.Duration(hour)*time.Hour))...)
	}
	return out
}

// Featurizer computes the features the pipeline computes, in call order,
// with the running airs's own code (anomaly.Tracker). It carries state
// from the training period into the scored one, as a running airs does.
type Featurizer struct {
	t *anomaly.Tracker
}

// NewFeaturizer starts with no history.
func NewFeaturizer() *Featurizer { return &Featurizer{t: anomaly.NewTracker()} }

// Features is c's features; it records c (so call it in time order). An
// injected call is scored without being recorded when keep is false, so
// one anomaly does not change the next one's features.
func (z *Featurizer) Features(c Call, keep bool) anomaly.Features {
	f := anomaly.Features{Caller: c.Caller, Tool: c.Tool, Unix: c.At.Unix(), ParamSizeBytes: c.Size}
	var r anomaly.Recent
	if keep {
		r = z.t.Observe(c.Caller, c.Tool, anomaly.Folders{}, c.At)
	} else {
		r = z.t.Peek(c.Caller, c.Tool, anomaly.Folders{}, c.At)
	}
	r.Apply(&f)
	return f
}
