package recommender

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// An update runs after every signal event, so what it derives from the
// catalog (the caller's tools, each tool's parameters, the text model's
// documents) is cached per caller until the registry's tool set changes
// (a catalog with a Generation) or catalogTTL passes (a sunset, a catalog
// without one).
const catalogTTL = 5 * time.Second

type generationer interface{ Generation() uint64 }

type toolInfo struct {
	props     map[string]prop
	fileParam string
	docs      []string
	lower     string          // name and description, lower case (the file kinds match it)
	kinds     map[string]bool // namesKind's answers
}

type callerCatalog struct {
	gen     uint64
	at      time.Time
	entries []selector.Entry
	infos   []*toolInfo // infos[i] is entries[i]'s
	key     string      // hash of the tool set, for the text model
}

// callable is the caller's tools, from the cache when it is fresh (r.mu held).
func (r *Recommender) callable(caller string, cs *callerState, now time.Time) []selector.Entry {
	var gen uint64
	g, hasGen := r.cfg.Catalog.(generationer)
	if hasGen {
		gen = g.Generation()
	}
	if c := cs.catalog; c != nil && c.gen == gen && now.Sub(c.at) < catalogTTL && now.Sub(c.at) >= 0 {
		return c.entries
	}
	entries := r.cfg.Catalog.Callable(caller)
	h := sha256.New()
	infos := make([]*toolInfo, len(entries))
	for i, e := range entries {
		h.Write([]byte(e.Tool.Name + "\x00" + e.Tool.Description + "\x00"))
		infos[i] = r.info(e.Tool)
	}
	cs.catalog = &callerCatalog{gen: gen, at: now, entries: entries, infos: infos, key: hex.EncodeToString(h.Sum(nil))}
	return entries
}

// info is what the recommender reads of a tool's schema, parsed once per
// schema (r.mu held).
func (r *Recommender) info(t pipeline.Tool) *toolInfo {
	k := t.Name + "\x00" + t.Version + "\x00" + string(t.Parameters)
	if ti, ok := r.infos[k]; ok {
		return ti
	}
	if len(r.infos) >= maxInfos {
		clear(r.infos)
	}
	props := properties(t.Parameters)
	ti := &toolInfo{props: props, fileParam: fileParamOf(props), docs: paramDocsOf(props),
		lower: strings.ToLower(t.Name + " " + t.Description)}
	r.infos[k] = ti
	return ti
}

// maxInfos bounds the parsed schemas kept (a registry of many thousand
// tools, or many narrowed views of them, starts the cache afresh).
const maxInfos = 8192
