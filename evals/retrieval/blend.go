package retrieval

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// newBlend builds `--embedder blend[:OPTIONS]` (the committed tool model
// plus the committed word vectors, optionally a lexical part) and
// `--embedder words[:OPTIONS]` (the word vectors alone).
func newBlend(spec string, lo embeddings.LexicalOptions) (embeddings.Embedder, error) {
	o := embeddings.BlendOptions{Lexical: lo}
	var parts embeddings.PartsOptions
	mapFile := ""
	for _, kv := range strings.Split(spec, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if k == "norm" && (v == "max" || v == "minmax") {
			o.Norm = v
			continue
		}
		if k == "hubrefs" {
			f, err := os.Open(v)
			if err != nil {
				return nil, fmt.Errorf("retrieval: blend hubrefs: %w", err)
			}
			refs, err := embeddings.ReadHubRefs(f)
			f.Close()
			if err != nil {
				return nil, err
			}
			o.Hub.Refs = refs
			continue
		}
		if k == "piecesfile" {
			f, err := os.Open(v)
			if err != nil {
				return nil, fmt.Errorf("retrieval: blend piecesfile: %w", err)
			}
			pc, err := embeddings.LoadPieces(f)
			f.Close()
			if err != nil {
				return nil, err
			}
			o.Pieces = pc
			continue
		}
		if k == "map" {
			mapFile = v
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("retrieval: blend option %q: want KEY=NUMBER (words=0.3, lex=0.2, dim=256, dense=1, sif=0.001, common=1)", kv)
		}
		switch k {
		case "words":
			if f <= 0 || f >= 1 {
				return nil, fmt.Errorf("retrieval: blend words=%v: the word vectors' share must be between 0 and 1 (exclusive)", f)
			}
			o.WordWeight = f
		case "lex":
			o.LexicalWeight = f
		case "pieces":
			if f <= 0 {
				f = -1 // off
			}
			o.PieceWeight = f
		case "dim":
			o.Lexical.Dim = int(f)
		case "dense":
			o.DenseWeight = f
		case "group":
			o.GroupWeight = f
		case "name":
			o.NameWeight = f
		case "sif":
			o.Words.SIF = f
		case "common":
			o.Words.Common = int(f)
		case "raw":
			o.RawWords = f != 0
		case "soft":
			o.SoftMatch.Weight = f
		case "sdepth":
			o.SoftMatch.Depth = int(f)
		case "floor":
			o.SoftMatch.Floor = f
		case "swords":
			o.SoftMatch.MaxWords = int(f)
		case "srel":
			o.SoftMatch.Relative = f != 0
		case "sparams":
			o.SoftMatch.NoParams = f == 0
		case "sgroup":
			o.SoftMatch.Group = f != 0
		case "sprec":
			o.SoftMatch.Precision = f
		case "sidf":
			o.SoftMatch.IDF = f != 0
		case "sf1":
			o.SoftMatch.Harmonic = f != 0
		case "hub":
			if f <= 0 {
				f = -1 // off
			}
			o.Hub.Weight = f
		case "hubk":
			o.Hub.K = int(f)
		case "parts":
			parts.Off = f == 0
		case "dparts":
			parts.DenseParts = partsScale(f)
		case "gparts":
			parts.GroupParts = partsScale(f)
		default:
			return nil, fmt.Errorf("retrieval: unknown blend option %q (words, lex, dim, dense, group, name, sif, common, raw, map, norm, soft, sdepth, floor, swords, srel, sparams, sgroup, sprec, sf1, sidf, hub, hubk, hubrefs, parts, dparts, gparts, pieces, piecesfile)", k)
		}
	}
	if o.WordWeight > 0 && o.LexicalWeight > 0 && o.WordWeight+o.LexicalWeight >= 1 {
		return nil, fmt.Errorf("retrieval: blend words=%v + lex=%v leave the model no share (their sum must be below 1)", o.WordWeight, o.LexicalWeight)
	}
	m, err := embeddings.DefaultModel()
	if err != nil {
		return nil, err
	}
	if mapFile != "" {
		if o.Words.Map, err = loadWordMap(mapFile); err != nil {
			return nil, err
		}
	}
	b, err := embeddings.NewBlend(m, o)
	if err != nil || parts == (embeddings.PartsOptions{}) {
		return b, err
	}
	return partsBlend{b, parts}, nil
}

// partsScale is a spec's scale of the parts search as PartsOptions takes
// it: 0 or less is "not scaled" (negative).
func partsScale(f float64) float64 {
	if f <= 0 {
		return -1
	}
	return f
}

// partsBlend is a blend whose spec names how a request of several needs
// is searched (parts=0: whole; dparts, gparts: PartsOptions.DenseParts,
// GroupParts): the index it is opened with takes them (PartsAdvisor).
type partsBlend struct {
	*embeddings.Blend
	parts embeddings.PartsOptions
}

// Parts are the spec's parts options (embeddings.PartsAdvisor).
func (b partsBlend) Parts() embeddings.PartsOptions { return b.parts }

// newWords builds `--embedder words[:sif=A,common=K]`.
func newWords(spec string) (embeddings.Embedder, error) {
	var o embeddings.WordVectorOptions
	for _, kv := range strings.Split(spec, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if k == "map" {
			m, err := loadWordMap(v)
			if err != nil {
				return nil, err
			}
			o.Map = m
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("retrieval: words option %q: want KEY=NUMBER (sif=0.001, common=1)", kv)
		}
		switch k {
		case "sif":
			o.SIF = f
		case "common":
			o.Common = int(f)
		default:
			return nil, fmt.Errorf("retrieval: unknown words option %q (sif, common)", k)
		}
	}
	return embeddings.NewWordVectors(o)
}
