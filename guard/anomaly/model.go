package anomaly

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"
)

// FormatVersion is the model file's format; a file of another format is
// refused rather than misread.
const FormatVersion = 2

// Evidence thresholds: below them a feature abstains for the agent.
const (
	// MinDaysForHour: the hour of day is judged once an agent has been
	// active on this many days.
	MinDaysForHour = 4
	// minCallsForNovelty: a new tool or folder is judged once the agent
	// has made this many calls (fewer say nothing of its habits).
	minCallsForNovelty = 3
	// minMinutesForRate: the call rate is judged once the agent was
	// active in this many distinct minutes.
	minMinutesForRate = 3
)

// Floors below which a rate or size is never unusual, whatever the
// history: a person reading a few files in a minute, or sending a few
// hundred bytes of arguments, is not an anomaly even if the agent never
// did.
const (
	floorLast10s    = 4
	floorLast20s    = 5
	floorLast30s    = 6
	floorLastMinute = 8
	floorSize       = 256
	floorSpan       = time.Second // a span shorter than this may be unusual
)

// maxFoldersPerAgent bounds the folders a profile remembers (past it a
// new folder is not remembered, and the agent's many folders already make
// a new one unsurprising).
const maxFoldersPerAgent = 2048

// toolStat is one agent's use of one tool.
type toolStat struct {
	N       int `json:"n"`
	MaxSize int `json:"max_size"`
}

// profile is what the model knows of one agent (or of everyone: the
// model's "all" profile, which judges an agent it has never seen).
type profile struct {
	Calls         int                 `json:"calls"`
	Minutes       int                 `json:"minutes"` // distinct active minutes
	Days          int                 `json:"days"`    // distinct active days
	HourDays      [24]int32           `json:"hour_days"`
	MaxLast10s    int                 `json:"max_last_10s"`
	MaxLast20s    int                 `json:"max_last_20s"` // 0 in a model trained before it was counted: not judged
	MaxLast30s    int                 `json:"max_last_30s"` // 0 in a model trained before it was counted: not judged
	MaxLastMinute int                 `json:"max_last_minute"`
	MinSpan       time.Duration       `json:"min_span"` // shortest Span seen; 0 none
	MaxSize       int                 `json:"max_size"`
	Tools         map[string]toolStat `json:"tools"`
	FolderCalls   int                 `json:"folder_calls"` // calls that named a folder
	Folders       map[uint64]int32    `json:"folders"`
	Tops          map[uint64]int32    `json:"tops"` // top-level folders
	// After its first discoveryWarmup calls (of any tool; naming a
	// folder), how many calls the agent made and how many of them took up
	// a tool (a top-level folder) new to it: its rate of discovery.
	LateCalls       int `json:"late_calls"`
	LateNewTools    int `json:"late_new_tools"`
	LateFolderCalls int `json:"late_folder_calls"`
	LateNewTops     int `json:"late_new_tops"`

	// Training state, so Update continues where the last training ended.
	LastMinute  int64     `json:"last_minute"`
	LastDay     int64     `json:"last_day"`
	HourLastDay [24]int64 `json:"hour_last_day"`
}

// discoveryWarmup: an agent's first calls discover its tools and folders
// by necessity; the discovery rate counts the calls after them.
const discoveryWarmup = 5

func newProfile() *profile {
	p := &profile{Tools: map[string]toolStat{}, Folders: map[uint64]int32{}, Tops: map[uint64]int32{}, LastMinute: -1, LastDay: -1}
	for h := range p.HourLastDay {
		p.HourLastDay[h] = -1
	}
	return p
}

// Model is a trained set of profiles: immutable once built, safe for
// concurrent Score.
type Model struct {
	// newTool and newTop are everyone's chance that a call's tool (or
	// top-level folder) is one its agent had not used before: the prior
	// an agent's own short history is shrunk to (novelty).
	newTool, newTop float64

	version string
	agents  map[string]*profile
	all     *profile
	through time.Time
}

// file is the on-disk form.
type file struct {
	Format  int                 `json:"format"`
	Through time.Time           `json:"through"` // the newest call learned
	Agents  map[string]*profile `json:"agents"`
	All     *profile            `json:"all"`
}

// Version is the content hash of the model (its file's sha256, 12 hex),
// written to every audit record the model scored.
func (m *Model) Version() string { return m.version }

// Through is the time of the newest call the model learned: Update takes
// the calls after it.
func (m *Model) Through() time.Time { return m.through }

// Agents is how many agents the model has a profile of.
func (m *Model) Agents() int { return len(m.agents) }

// Train learns the profiles of the calls, in time order. A call a person
// denied, or that is still held, is not given to it (guard.TrainingSet
// leaves them out); one a person approved is, and so becomes usual for
// its agent.
func Train(calls []Features) (*Model, error) {
	if len(calls) < 20 {
		return nil, fmt.Errorf("anomaly: %d calls is too few to learn what is normal; train on an audit log with at least 20 calls", len(calls))
	}
	m := &Model{agents: map[string]*profile{}, all: newProfile()}
	return m.learn(calls)
}

// Update is the model with calls learned too (the calls after Through,
// in time order): training is counting, so nothing old is replayed.
func (m *Model) Update(calls []Features) (*Model, error) {
	n := &Model{agents: make(map[string]*profile, len(m.agents)), all: m.all.clone(), through: m.through}
	for k, p := range m.agents {
		n.agents[k] = p.clone()
	}
	return n.learn(calls)
}

func (p *profile) clone() *profile {
	c := *p
	c.Tools = make(map[string]toolStat, len(p.Tools))
	for k, v := range p.Tools {
		c.Tools[k] = v
	}
	c.Folders = make(map[uint64]int32, len(p.Folders))
	for k, v := range p.Folders {
		c.Folders[k] = v
	}
	c.Tops = make(map[uint64]int32, len(p.Tops))
	for k, v := range p.Tops {
		c.Tops[k] = v
	}
	return &c
}

func (m *Model) learn(calls []Features) (*Model, error) {
	for i := range calls {
		f := &calls[i]
		p := m.agents[f.Caller]
		if p == nil {
			p = newProfile()
			m.agents[f.Caller] = p
		}
		p.add(f)
		m.all.add(f)
		if t := time.Unix(f.Unix, 0); t.After(m.through) {
			m.through = t
		}
	}
	return m.sealed()
}

// add counts one call.
func (p *profile) add(f *Features) {
	if _, seen := p.Tools[f.Tool]; p.Calls >= discoveryWarmup {
		p.LateCalls++
		if !seen {
			p.LateNewTools++
		}
	}
	if f.NFolders > 0 && p.FolderCalls >= discoveryWarmup {
		p.LateFolderCalls++
		for _, t := range f.Tops[:f.NFolders] {
			if _, seen := p.Tops[t]; !seen {
				p.LateNewTops++
				break
			}
		}
	}
	p.Calls++
	if min := f.Unix / 60; min != p.LastMinute {
		p.Minutes++
		p.LastMinute = min
	}
	day, h := f.Unix/86400, f.Hour()
	if day != p.LastDay {
		p.Days++
		p.LastDay = day
	}
	if p.HourLastDay[h] != day {
		p.HourDays[h]++
		p.HourLastDay[h] = day
	}
	p.MaxLast10s = max(p.MaxLast10s, f.Last10s)
	p.MaxLast20s = max(p.MaxLast20s, f.Last20s)
	p.MaxLast30s = max(p.MaxLast30s, f.Last30s)
	p.MaxLastMinute = max(p.MaxLastMinute, f.LastMinute)
	if f.Span > 0 && (p.MinSpan == 0 || f.Span < p.MinSpan) {
		p.MinSpan = f.Span
	}
	p.MaxSize = max(p.MaxSize, f.ParamSizeBytes)
	ts := p.Tools[f.Tool]
	ts.N++
	ts.MaxSize = max(ts.MaxSize, f.ParamSizeBytes)
	p.Tools[f.Tool] = ts
	if f.NFolders > 0 {
		p.FolderCalls++
	}
	for i, d := range f.Folders[:f.NFolders] {
		if n, ok := p.Folders[d]; ok || len(p.Folders) < maxFoldersPerAgent {
			p.Folders[d] = n + 1
		}
		if n, ok := p.Tops[f.Tops[i]]; ok || len(p.Tops) < maxFoldersPerAgent {
			p.Tops[f.Tops[i]] = n + 1
		}
	}
}

// Score is the call's anomaly score, 0–255 for [0, 1]: the highest of its
// features' scores (each bounded by its evidence, see the package
// comment). It allocates nothing.
func (m *Model) Score(f Features) uint8 {
	e := m.Explain(&f)
	return fixed(max(e.Tool, e.Rate, e.Size, e.Hour, e.Folder))
}

// Explanation is each feature's score of one call, in [0, 1]; the call's
// score is the highest.
type Explanation struct {
	Tool, Rate, Size, Hour, Folder float64
}

// Explain scores each feature of the call.
func (m *Model) Explain(f *Features) Explanation {
	var e Explanation
	p := m.agents[f.Caller]
	known := p != nil
	if !known {
		p = m.all // an agent never seen: judged by everyone's habits, its novelty is not judged
	}
	if known && !f.KnownTool && p.Calls >= minCallsForNovelty {
		if _, ok := p.Tools[f.Tool]; !ok {
			e.Tool = novelty(p.LateNewTools, p.LateCalls, m.newTool)
			_, anyone := m.all.Tools[f.Tool]
			switch {
			case anyone || p.LateCalls < minCallsToHold:
				// Another agent's tool, or an agent with too little history
				// of its own: reviewed, not held (usedToolCap).
				e.Tool = min(e.Tool, usedToolCap)
			default: // a tool nobody used
				e.Tool = max(e.Tool, 1-(1-e.Tool)/2)
			}
		}
	}
	e.Rate = p.rateScore(f)
	e.Size = p.sizeScore(f, m.all)
	if known {
		e.Hour = p.hourScore(f.Hour())
	}
	fcalls, late, lateNew := p.FolderCalls, p.LateFolderCalls, p.LateNewTops
	if f.LiveFolderCalls > fcalls {
		fcalls, late, lateNew = f.LiveFolderCalls, f.LiveLateFolderCalls, f.LiveLateNewTops
	}
	if known && fcalls >= minCallsForNovelty {
		ns := novelty(lateNew, late, m.newTop)
		for i, d := range f.Folders[:f.NFolders] {
			if f.KnownFolders&(1<<i) != 0 {
				continue
			}
			if _, ok := p.Folders[d]; ok {
				continue
			}
			_, topKnown := p.Tops[f.Tops[i]]
			if topKnown || f.KnownTops&(1<<i) != 0 {
				// A new folder inside one the agent works in: worth a
				// look, not a hold (newFolderCap).
				e.Folder = max(e.Folder, min(ns, newFolderCap))
				continue
			}
			fs := ns
			if _, anyone := m.all.Tops[f.Tops[i]]; anyone || late < minCallsToHold {
				fs = min(fs, usedToolCap) // another agent's folder, or little history: reviewed, not held
			} else if m.all.FolderCalls >= minCallsForNovelty {
				fs = max(fs, 1-(1-fs)/2)
			}
			e.Folder = max(e.Folder, fs)
		}
	}
	return e
}

// novelty is the score of something new to an agent that, in n calls
// after its first few, took up found new things: 1 − p, p its rate of
// discovery (found/n) shrunk toward everyone's (prior) with the weight of
// priorCalls calls — so an agent with a short history is judged by how
// often agents take up new things, and its own history decides as it
// grows: an agent that keeps trying new tools is not surprising when it
// does again.
func novelty(found, n int, prior float64) float64 {
	return 1 - (float64(found)+priorCalls*prior)/(float64(n)+priorCalls)
}

// priorCalls is the prior's weight in novelty, in calls.
const priorCalls = 10

// minCallsToHold: a tool or folder new to an agent is held (scores above
// usedToolCap) only when the agent's own history says it rarely takes up
// new ones — this many calls after its first few; with less, everyone's
// habits (the prior) may flag it for review but not hold it.
const minCallsToHold = 20

// usedToolCap bounds the score of a tool new to an agent that other
// agents use: below the default block threshold (0.95), so the call goes
// ahead, is queued for a person's review and is learned — an agent taking
// up a tool its peers use is not locked out of it — while a tool nobody
// used may be held.
const usedToolCap = 0.94

// newFolderCap bounds the score of a folder new to an agent inside a
// top-level folder it works in: at most the review level, so the call
// goes ahead, is shown to a person, and is learned; a folder outside
// every one the agent knows may be held.
const newFolderCap = 0.9

// widen is how much a bound learned from n observations is widened: the
// fewer, the wider (1 + 1/√n).
func widen(n int) float64 { return 1 + 1/math.Sqrt(float64(max(n, 1))) }

// widenSize is widen for argument sizes, which spread over orders of
// magnitude (a summary of a page or of a book): 1 + 4/√n.
func widenSize(n int) float64 { return 1 + 4/math.Sqrt(float64(max(n, 1))) }

// over is the score of a value r times its bound: 0 up to the bound,
// then 1 − r^-3 (twice the bound 0.875, 2.2 times 0.9, 2.7 times 0.95).
func over(r float64) float64 {
	if r <= 1 {
		return 0
	}
	return 1 - 1/(r*r*r)
}

func (p *profile) rateScore(f *Features) float64 {
	if p.Minutes < minMinutesForRate {
		return 0
	}
	w := widen(p.Minutes)
	r := float64(f.Last10s) / (float64(max(p.MaxLast10s, floorLast10s)) * w)
	if p.MaxLast20s > 0 {
		r = max(r, float64(f.Last20s)/(float64(max(p.MaxLast20s, floorLast20s))*w))
	}
	if p.MaxLast30s > 0 {
		r = max(r, float64(f.Last30s)/(float64(max(p.MaxLast30s, floorLast30s))*w))
	}
	r = max(r, float64(f.LastMinute)/(float64(max(p.MaxLastMinute, floorLastMinute))*w))
	if f.Span > 0 && p.MinSpan > 0 {
		r = max(r, float64(min(p.MinSpan, floorSpan))/(float64(f.Span)*w))
	}
	return over(r)
}

// sizeScore judges the argument size against the agent's own calls of
// the tool; for a tool new to the agent, against everyone's calls of it
// (a tool's arguments are as large as the tool needs: a summary's text);
// for a tool nobody called, against the agent's largest.
func (p *profile) sizeScore(f *Features, all *profile) float64 {
	bound, n := p.MaxSize, p.Calls
	if t, ok := p.Tools[f.Tool]; ok {
		bound, n = t.MaxSize, t.N
	} else if t, ok := all.Tools[f.Tool]; ok {
		bound, n = t.MaxSize, t.N
	}
	if n == 0 {
		return 0
	}
	return over(float64(f.ParamSizeBytes) / (float64(max(bound, floorSize)) * widenSize(n)))
}

// hourScore: how many of the agent's days it was active at this hour
// (and half of the neighbouring hours'), against all its days.
func (p *profile) hourScore(h int) float64 {
	if p.Days < MinDaysForHour {
		return 0
	}
	a := float64(p.HourDays[h]) + 0.5*float64(p.HourDays[(h+23)%24]+p.HourDays[(h+1)%24])
	return max(0, 1-(a+0.5)/float64(p.Days+1))
}

func fixed(s float64) uint8 { return uint8(math.Round(min(max(s, 0), 1) * 255)) }

// Judgement says what the model can judge of one agent yet.
type Judgement struct {
	Agent   string `json:"agent"`
	Calls   int    `json:"calls"`
	Minutes int    `json:"active_minutes"`
	Days    int    `json:"days"`
	// NewTool is the score a tool new to the agent gets (0: not judged
	// yet); NewFolder likewise for a folder.
	NewTool   float64 `json:"new_tool"`
	NewFolder float64 `json:"new_folder"`
	// Rate: bursts are judged; RateAt is the calls in a minute that score
	// 0.9.
	Rate   bool    `json:"rate"`
	RateAt float64 `json:"rate_at_0.9,omitempty"`
	// Hour: the hour of day is judged (MinDaysForHour days of history).
	Hour bool `json:"hour"`
	// SizeAt is the argument size that scores 0.9 for its most used tool.
	SizeAt int `json:"size_at_0.9,omitempty"`
}

// at09 is the ratio over its bound that scores 0.9.
var at09 = math.Cbrt(10)

// Judges says, per agent (sorted by name), what the model can judge yet.
func (m *Model) Judges() []Judgement {
	out := make([]Judgement, 0, len(m.agents))
	for name, p := range m.agents {
		j := Judgement{Agent: name, Calls: p.Calls, Minutes: p.Minutes, Days: p.Days, Hour: p.Days >= MinDaysForHour}
		if p.Calls >= minCallsForNovelty {
			j.NewTool = math.Round(novelty(p.LateNewTools, p.LateCalls, m.newTool)*1000) / 1000
		}
		if p.FolderCalls >= minCallsForNovelty {
			j.NewFolder = math.Round(novelty(p.LateNewTops, p.LateFolderCalls, m.newTop)*1000) / 1000
		}
		if p.Minutes >= minMinutesForRate {
			j.Rate = true
			j.RateAt = math.Round(float64(max(p.MaxLastMinute, floorLastMinute)) * widen(p.Minutes) * at09)
		}
		top, topN := "", 0
		for t, s := range p.Tools {
			if s.N > topN || (s.N == topN && t < top) {
				top, topN = t, s.N
			}
		}
		if topN > 0 {
			j.SizeAt = int(float64(max(p.Tools[top].MaxSize, floorSize)) * widenSize(topN) * at09)
		}
		out = append(out, j)
	}
	sortJudgements(out)
	return out
}

// sealed derives the scoring state and sets the version from the encoded
// content.
func (m *Model) sealed() (*Model, error) {
	var tools, calls, tops, fcalls int
	for _, p := range m.agents {
		tools, calls, tops, fcalls = tools+p.LateNewTools, calls+p.LateCalls, tops+p.LateNewTops, fcalls+p.LateFolderCalls
	}
	// Everyone's rate of discovery after the first calls: the prior of an
	// agent with little history of its own.
	m.newTool = float64(tools+1) / float64(calls+2)
	m.newTop = float64(tops+1) / float64(fcalls+2)
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	m.version = hex.EncodeToString(sum[:6])
	return m, nil
}

// MarshalJSON is the model file's content.
func (m *Model) MarshalJSON() ([]byte, error) {
	return json.Marshal(file{Format: FormatVersion, Through: m.through.UTC(), Agents: m.agents, All: m.all})
}

// Parse reads a model file's content.
func Parse(b []byte) (*Model, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("anomaly: model file is not a model (%v); make one with `airs guard train --out FILE`", err)
	}
	if f.Format != FormatVersion {
		return nil, fmt.Errorf("anomaly: model format %d, this airs reads %d; retrain with `airs guard train`", f.Format, FormatVersion)
	}
	if f.All == nil || len(f.Agents) == 0 {
		return nil, fmt.Errorf("anomaly: model file is malformed (no profiles); retrain with `airs guard train`")
	}
	m := &Model{agents: f.Agents, all: f.All, through: f.Through}
	for name, p := range m.agents {
		if p == nil || p.Tools == nil || p.Folders == nil {
			return nil, fmt.Errorf("anomaly: model file is malformed at agent %q; retrain with `airs guard train`", name)
		}
	}
	for _, p := range m.agents {
		if p.Tops == nil {
			p.Tops = map[uint64]int32{}
		}
	}
	if m.all.Tops == nil {
		m.all.Tops = map[uint64]int32{}
	}
	if m.all.Tools == nil || m.all.Folders == nil {
		return nil, fmt.Errorf("anomaly: model file is malformed (everyone's profile); retrain with `airs guard train`")
	}
	return m.sealed()
}

// Load reads a model file.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("anomaly: %w; make a model with `airs guard train --out %s`", err, path)
	}
	return Parse(b)
}

// Save writes the model atomically (temp file, rename), so a process
// reloading it never reads half a file.
func (m *Model) Save(path string) error {
	b, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
