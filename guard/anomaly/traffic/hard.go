package traffic

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The hard traffic model: eight agents with their own habits that work in
// sessions with pauses between them (so an agent's first call after a
// pause comes after a quiet minute), share tools with each other (so a
// tool new to one agent is one the others use), name files in their own
// folders, and differ in pace by two orders of magnitude. Anomalies are
// injected into the test period only:
//
//   - burst: an agent calling its usual tools at 5×, 20× and 50× its
//     active rate for five minutes (Factor says which);
//   - novel: an agent calling a tool other agents use and it never did;
//   - payload: an agent's usual tool with arguments 100× its usual size;
//   - path: an agent naming a file in a folder it never touched (another
//     agent's, or one nobody touched);
//   - off-hours (with days of history): an agent working a session at an
//     hour it never works.
//
// HardOptions.TrainMinutes sizes a short history (the 30
// minutes); HardOptions.Days a long one (with working hours and
// weekends).

// HardOptions size a generated pair of traces.
type HardOptions struct {
	Seed uint64
	// TrainMinutes of normal history (default 30), unless Days is set:
	// then Days days of it, with the agents' working hours.
	TrainMinutes, Days int
	// TestMinutes of test traffic after the history (default 240).
	TestMinutes int
}

type hardTool struct {
	name    string
	weight  int
	folders []string // where its paths are; none: no path argument
	size    [2]int   // the free text's size range (bytes)
}

type hardAgent struct {
	name       string
	rate       float64    // calls a minute while in a session
	session    [2]float64 // minutes
	pause      [2]float64 // minutes
	hours      [2]int     // working hours [from, to) UTC
	weekdays   bool       // works Monday to Friday only
	tools      []hardTool
	paceJitter float64 // 0: Poisson arrivals; else a share of calls that come in quick runs
}

var hardAgents = []hardAgent{
	{name: "ana", rate: 4, session: [2]float64{2, 10}, pause: [2]float64{1, 15}, hours: [2]int{8, 18}, weekdays: true, paceJitter: 0.3,
		tools: []hardTool{{"read-file", 6, []string{"docs/guides", "docs/api"}, [2]int{0, 0}}, {"search", 3, []string{"docs"}, [2]int{10, 60}}, {"list-dir", 1, []string{"docs"}, [2]int{0, 0}}}},
	{name: "ben", rate: 3, session: [2]float64{3, 12}, pause: [2]float64{2, 20}, hours: [2]int{9, 19}, weekdays: true, paceJitter: 0.2,
		tools: []hardTool{{"write-file", 4, []string{"src/app", "src/lib"}, [2]int{200, 3000}}, {"read-file", 4, []string{"src/app", "src/lib"}, [2]int{0, 0}}, {"list-dir", 1, []string{"src"}, [2]int{0, 0}}}},
	{name: "cleo", rate: 2, session: [2]float64{2, 8}, pause: [2]float64{3, 25}, hours: [2]int{7, 16}, weekdays: true,
		tools: []hardTool{{"search", 4, []string{"reports/q1", "reports/q2"}, [2]int{10, 80}}, {"summarize", 2, nil, [2]int{2000, 20000}}, {"read-file", 3, []string{"reports/q1", "reports/q2"}, [2]int{0, 0}}}},
	{name: "dov", rate: 0.7, session: [2]float64{5, 30}, pause: [2]float64{5, 40}, hours: [2]int{10, 17}, weekdays: true,
		tools: []hardTool{{"read-file", 1, []string{"notes"}, [2]int{0, 0}}}},
	{name: "eli", rate: 12, session: [2]float64{1, 4}, pause: [2]float64{1, 10}, hours: [2]int{0, 24}, paceJitter: 0.5,
		tools: []hardTool{{"calculator", 8, nil, [2]int{5, 40}}, {"search", 1, []string{"data"}, [2]int{10, 40}}}},
	{name: "fetch-bot", rate: 30, session: [2]float64{1, 3}, pause: [2]float64{8, 12}, hours: [2]int{0, 24},
		tools: []hardTool{{"list-dir", 1, []string{"backup/daily"}, [2]int{0, 0}}, {"read-file", 5, []string{"backup/daily", "backup/weekly"}, [2]int{0, 0}}}},
	{name: "gus", rate: 1, session: [2]float64{4, 20}, pause: [2]float64{5, 30}, hours: [2]int{8, 20}, weekdays: true,
		tools: []hardTool{{"summarize", 3, nil, [2]int{5000, 60000}}, {"read-file", 2, []string{"docs/guides", "reports/q1"}, [2]int{0, 0}}, {"compare", 1, nil, [2]int{4000, 30000}}}},
	{name: "hal", rate: 3, session: [2]float64{2, 10}, pause: [2]float64{2, 20}, hours: [2]int{6, 22}, paceJitter: 0.2,
		tools: []hardTool{{"read-file", 4, projects(), [2]int{0, 0}}, {"write-file", 2, projects(), [2]int{100, 2000}}, {"search", 2, projects(), [2]int{10, 60}}, {"list-dir", 1, projects(), [2]int{0, 0}}, {"delete-file", 1, projects(), [2]int{0, 0}}}},
}

// projects is hal's many folders: an agent that touches a new one every
// few calls, whose new folder is no surprise.
func projects() []string {
	var out []string
	for _, c := range "abcdefghijklmnopqrstuvwxyz" {
		out = append(out, "projects/"+string(c)+"x")
	}
	return out
}

// hardStart is a Monday, 10:00 UTC for a short history (every agent in
// its working hours), 00:00 for days of it.
func hardStart(days int) time.Time {
	if days > 0 {
		return time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
}

// Hard generates a training trace (normal traffic only) and a test trace
// (more normal traffic with the anomalies injected), each in time order.
func Hard(o HardOptions) (train, test []TraceLine) {
	if o.TrainMinutes <= 0 {
		o.TrainMinutes = 30
	}
	if o.TestMinutes <= 0 {
		o.TestMinutes = 240
	}
	start := hardStart(o.Days)
	split := start.Add(time.Duration(o.TrainMinutes) * time.Minute)
	if o.Days > 0 {
		split = start.AddDate(0, 0, o.Days)
		split = split.Add(10 * time.Hour) // the test starts at 10:00, everyone's working hours
	}
	end := split.Add(time.Duration(o.TestMinutes) * time.Minute)
	rng := rand.New(rand.NewPCG(o.Seed, 37))
	var all []TraceLine
	for _, a := range hardAgents {
		all = append(all, a.normal(rng, start, end)...)
	}
	var inj []TraceLine
	drop := map[string][][2]time.Time{} // an agent's normal calls replaced by its burst
	period := end.Sub(split)
	slot := func(i, n int) time.Time { // spread the injections over the test period
		return split.Add(period * time.Duration(i+1) / time.Duration(n+1)).Add(time.Duration(rng.IntN(60)) * time.Second)
	}
	for ai, a := range hardAgents {
		novelUsed := map[string]bool{} // a tool called once is not new the second time
		kinds := []string{"burst5", "burst20", "burst50", LabelNovel, LabelPayload, LabelPath, LabelNovel, LabelPayload, LabelPath}
		if o.Days >= 4 && (a.hours[0] > 0 || a.hours[1] < 24) {
			kinds = append(kinds, LabelOffHours)
		}
		rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		for k, kind := range kinds {
			at := slot(k, len(kinds)).Add(time.Duration(ai) * 7 * time.Second)
			switch kind {
			case "burst5", "burst20", "burst50":
				factor := map[string]float64{"burst5": 5, "burst20": 20, "burst50": 50}[kind]
				calls := a.burst(rng, at, factor)
				inj = append(inj, calls...)
				drop[a.name] = append(drop[a.name], [2]time.Time{at.Add(-time.Second), calls[len(calls)-1].Time.Add(time.Minute)})
			case LabelNovel:
				inj = append(inj, a.novel(rng, at, novelUsed))
			case LabelPayload:
				inj = append(inj, a.payload(rng, at))
			case LabelPath:
				inj = append(inj, a.path(rng, at))
			case LabelOffHours:
				inj = append(inj, a.offHours(rng, split)...)
			}
		}
	}
	for _, l := range all {
		if l.Time.Before(split) {
			train = append(train, l)
			continue
		}
		if slices.ContainsFunc(drop[l.Agent], func(w [2]time.Time) bool { return !l.Time.Before(w[0]) && l.Time.Before(w[1]) }) {
			continue
		}
		test = append(test, l)
	}
	test = append(test, inj...)
	byTime := func(a, b TraceLine) int { return a.Time.Compare(b.Time) }
	slices.SortStableFunc(train, byTime)
	slices.SortStableFunc(test, byTime)
	return train, test
}

// working reports whether t is in a's working hours.
func (a *hardAgent) working(t time.Time) bool {
	if a.weekdays && (t.Weekday() == time.Saturday || t.Weekday() == time.Sunday) {
		return false
	}
	h := t.Hour()
	return h >= a.hours[0] && h < a.hours[1]
}

func between(rng *rand.Rand, r [2]float64) time.Duration {
	return time.Duration((r[0] + rng.Float64()*(r[1]-r[0])) * float64(time.Minute))
}

// normal is a's sessions from start to end.
func (a *hardAgent) normal(rng *rand.Rand, start, end time.Time) []TraceLine {
	var out []TraceLine
	t := start.Add(time.Duration(rng.Float64() * float64(between(rng, a.pause))))
	for t.Before(end) {
		if !a.working(t) {
			t = t.Add(time.Duration(5+rng.IntN(25)) * time.Minute)
			continue
		}
		stop := t.Add(between(rng, a.session))
		for t.Before(stop) && t.Before(end) {
			out = append(out, a.call(rng, t, LabelNormal, a.pick(rng), 1))
			gap := rng.ExpFloat64() / a.rate * float64(time.Minute)
			if a.paceJitter > 0 && rng.Float64() < a.paceJitter { // a quick run: an LLM's calls within one turn
				gap /= 6
			}
			t = t.Add(time.Duration(gap))
		}
		t = t.Add(between(rng, a.pause))
	}
	return out
}

func (a *hardAgent) pick(rng *rand.Rand) hardTool {
	w := 0
	for _, t := range a.tools {
		w += t.weight
	}
	n := rng.IntN(w)
	for _, t := range a.tools {
		if n -= t.weight; n < 0 {
			return t
		}
	}
	return a.tools[0]
}

// call is one call of tool t at at; sizeX scales its free text.
func (a *hardAgent) call(rng *rand.Rand, at time.Time, label string, t hardTool, sizeX float64) TraceLine {
	args := map[string]any{}
	if len(t.folders) > 0 {
		dir := t.folders[rng.IntN(len(t.folders))]
		if t.name == "list-dir" || t.name == "search" {
			args["path"] = dir + "/"
		} else {
			args["path"] = fmt.Sprintf("%s/f%03d.md", dir, rng.IntN(200))
		}
	}
	if t.size[1] > 0 {
		n := int(float64(t.size[0]+rng.IntN(t.size[1]-t.size[0]+1)) * sizeX)
		key := map[string]string{"search": "query", "calculator": "expression", "write-file": "content"}[t.name]
		if key == "" {
			key = "text"
		}
		args[key] = strings.Repeat("x", n)
	}
	b, _ := json.Marshal(args)
	return TraceLine{Time: at, Agent: a.name, Tool: t.name, ArgsBytes: len(b), Label: label, Args: b}
}

// burstMinutes is how long a burst lasts: a runaway loop, not a quick
// run of calls within one turn.
const burstMinutes = 5

// burst is burstMinutes of a's usual calls at factor × its rate.
func (a *hardAgent) burst(rng *rand.Rand, at time.Time, factor float64) []TraceLine {
	n := int(math.Round(burstMinutes * a.rate * factor))
	out := make([]TraceLine, 0, n)
	for i := range n {
		l := a.call(rng, at.Add(time.Duration(i)*burstMinutes*time.Minute/time.Duration(n)), LabelBurst, a.pick(rng), 1)
		l.Factor = factor
		out = append(out, l)
	}
	return out
}

// novel is a call of a tool another agent uses and a never did (nor in
// an earlier injection: used marks them).
func (a *hardAgent) novel(rng *rand.Rand, at time.Time, used map[string]bool) TraceLine {
	var others []hardTool
	for _, b := range hardAgents {
		for _, t := range b.tools {
			if !used[t.name] && !slices.ContainsFunc(a.tools, func(u hardTool) bool { return u.name == t.name }) &&
				!slices.ContainsFunc(others, func(u hardTool) bool { return u.name == t.name }) {
				others = append(others, t)
			}
		}
	}
	t := others[rng.IntN(len(others))]
	used[t.name] = true
	if len(t.folders) > 0 && len(a.tools[0].folders) > 0 {
		t.folders = a.tools[0].folders // in the agent's own folders: only the tool is new
	}
	return a.call(rng, at, LabelNovel, t, 1)
}

// payload is a call of a's tool with the largest usual arguments, 100×
// their usual size.
func (a *hardAgent) payload(rng *rand.Rand, at time.Time) TraceLine {
	t := a.tools[0]
	for _, u := range a.tools {
		if u.size[1] > t.size[1] {
			t = u
		}
	}
	if t.size[1] == 0 { // path-only tools: the path is the argument
		t.size = [2]int{60, 60}
	}
	usual := float64(t.size[0]+t.size[1]) / 2
	l := a.call(rng, at, LabelPayload, t, 100*max(usual, 60)/max(usual, 1))
	l.Factor = 100
	return l
}

// path is a read of a file in a folder a never touched.
func (a *hardAgent) path(rng *rand.Rand, at time.Time) TraceLine {
	folders := []string{"hr", "finance/payroll", "secrets"}
	for _, b := range hardAgents {
		for _, t := range b.tools {
			for _, f := range t.folders {
				if !a.uses(f) {
					folders = append(folders, f)
				}
			}
		}
	}
	t := hardTool{name: "read-file", folders: []string{folders[rng.IntN(len(folders))]}}
	if !slices.ContainsFunc(a.tools, func(u hardTool) bool { return u.name == "read-file" }) {
		t.name = a.tools[0].name // only the folder is new
		t.size = a.tools[0].size
	}
	return a.call(rng, at, LabelPath, t, 1)
}

func (a *hardAgent) uses(folder string) bool {
	for _, t := range a.tools {
		for _, f := range t.folders {
			if f == folder || strings.HasPrefix(f, folder+"/") || strings.HasPrefix(folder, f+"/") {
				return true
			}
		}
	}
	return false
}

// offHours is a session of a's usual calls at 03:00 on the first test
// day (an hour none of the agents with working hours works).
func (a *hardAgent) offHours(rng *rand.Rand, split time.Time) []TraceLine {
	at := time.Date(split.Year(), split.Month(), split.Day(), 3, rng.IntN(40), 0, 0, time.UTC)
	if at.Before(split) {
		at = at.AddDate(0, 0, 1)
	}
	n := 3 + rng.IntN(5)
	out := make([]TraceLine, n)
	for i := range out {
		out[i] = a.call(rng, at.Add(time.Duration(i)*time.Duration(60/a.rate)*time.Second), LabelOffHours, a.pick(rng), 1)
	}
	return out
}
