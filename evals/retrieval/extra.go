package retrieval

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// extraData are the extra training sets converted from public tool
// collections by data/make_extra_training.py (sources, licences and
// commits in that script and in EVALS.md). They are in the repository so
// that training is reproducible with no network.
//
//go:embed data/*_train_tools.jsonl.gz data/*_train_queries.jsonl.gz
var extraData embed.FS

// ExtraSets are the extra training sets `airs train retrieval --extra`
// adds: public tool collections with requests written for them, so that
// the model learns from thousands of distinct tools rather than the few
// hundred MetaTool and StableToolBench train on. They are training data
// only; nothing is evaluated on them.
var ExtraSets = []string{"sealtools", "toolalpaca", "apibench"}

// LoadExtra reads an extra training set by name (one of ExtraSets).
func LoadExtra(name string) (Dataset, error) {
	var files []recordFile
	for _, kind := range []string{"tools", "queries"} {
		path := "data/" + name + "_train_" + kind + ".jsonl.gz"
		f, err := extraData.Open(path)
		if err != nil {
			return Dataset{}, fmt.Errorf("retrieval: no extra training set %q (the sets: %s)", name, strings.Join(ExtraSets, ", "))
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return Dataset{}, fmt.Errorf("retrieval: %s: %w", path, err)
		}
		data, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			return Dataset{}, fmt.Errorf("retrieval: %s: %w", path, err)
		}
		recs, err := parseRecords(path, data)
		if err != nil {
			return Dataset{}, err
		}
		files = append(files, recordFile{path, recs})
	}
	sets, err := loadRecords(files)
	if err != nil {
		return Dataset{}, err
	}
	if len(sets) != 1 {
		return Dataset{}, fmt.Errorf("retrieval: extra set %q: want one dataset, got %d", name, len(sets))
	}
	ds := sets[0]
	ds.Name = name
	return ds, nil
}

// Held is what the extra training data must not contain: the held-out
// tools of the split datasets (unseen and unseen-dev) and the requests of
// their evaluation parts (every part but train).
type Held struct {
	names    map[string]bool // normalised names of held-out tools and their groups
	descs    []map[string]bool
	requests map[string]bool // normalised request texts
}

// HeldOut gathers what the split datasets hold out.
func HeldOut(sets []Dataset) *Held {
	h := &Held{names: map[string]bool{}, requests: map[string]bool{}}
	for i := range sets {
		ds := &sets[i]
		if !IsSplit(ds.Name) {
			continue
		}
		for _, d := range ds.Docs {
			if !HeldOutTool(ds, d.ID) {
				continue
			}
			if d.Group != "" {
				h.names[normName(d.Group)] = true
			} else {
				h.names[normName(d.Name)] = true
			}
			if w := wordSet(d.Description); len(w) >= 4 {
				h.descs = append(h.descs, w)
			}
		}
		for _, q := range ds.Queries {
			if SplitQuery(ds, q) != PartTrain {
				h.requests[normText(q.Text)] = true
			}
		}
	}
	return h
}

// Leaks tells whether a tool of the extra data looks like a held-out tool:
// the same name (or group) once case, separators and spaces are removed,
// or a description sharing at least 70% of its words (Jaccard) with a
// held-out tool's.
func (h *Held) Leaks(d *embeddings.Doc) bool {
	if h.names[normName(d.Name)] || (d.Group != "" && h.names[normName(d.Group)]) {
		return true
	}
	w := wordSet(d.Description)
	if len(w) < 4 {
		return false
	}
	for _, o := range h.descs {
		inter := 0
		for k := range w {
			if o[k] {
				inter++
			}
		}
		if float64(inter) >= 0.7*float64(len(w)+len(o)-inter) {
			return true
		}
	}
	return false
}

// Filter drops from an extra dataset every tool that Leaks, every request
// needing one, and every request repeating a held-out request; it returns
// the IDs of the dropped tools and the number of dropped requests.
func (h *Held) Filter(ds *Dataset) (dropped []string, droppedRequests int) {
	bad := map[string]bool{}
	docs := ds.Docs[:0:0]
	for _, d := range ds.Docs {
		if h.Leaks(&d) {
			bad[d.ID] = true
			dropped = append(dropped, d.ID)
			continue
		}
		docs = append(docs, d)
	}
	qs := ds.Queries[:0:0]
	for _, q := range ds.Queries {
		keep := !h.requests[normText(q.Text)]
		for _, g := range q.Gold {
			keep = keep && !bad[g]
		}
		if keep {
			qs = append(qs, q)
		} else {
			droppedRequests++
		}
	}
	ds.Docs, ds.Queries = docs, qs
	sort.Strings(dropped)
	return dropped, droppedRequests
}

// normName is a name without case, spaces or separators: "Get_Weather",
// "get weather" and "getWeather" are one name.
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r == ' ' || r == '_' || r == '-' || r == '.' || r == '/' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func normText(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// wordSet is the set of a text's analysed words (embeddings.Tokens: the
// index's own analysis, so no script is dropped).
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range embeddings.Tokens(s) {
		out[t] = true
	}
	return out
}
