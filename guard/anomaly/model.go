package anomaly

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
)

// FormatVersion is the model file's format; a file of another format is
// refused rather than misread.
const FormatVersion = 1

// node is one frozen node: integer compares only. A leaf has feat == leafFeat
// and its score in score (0–255 for [0, 1]).
type node struct {
	Feat  uint8  `json:"f"`
	Val   uint8  `json:"v"`
	Score uint8  `json:"s"`
	Left  uint32 `json:"l"`
	Right uint32 `json:"r"`
}

const leafFeat = 255

// Model is a frozen tree: immutable once built, safe for concurrent Score.
type Model struct {
	version string
	callers vocab
	tools   vocab
	nodes   []node
}

// file is the on-disk form.
type file struct {
	Format  int      `json:"format"`
	Callers []string `json:"callers"` // bin i+1
	Tools   []string `json:"tools"`
	Nodes   []node   `json:"nodes"`
}

// Version is the content hash of the model (its file's sha256, 12 hex),
// written to every audit record the model scored.
func (m *Model) Version() string { return m.version }

// Nodes is the size of the frozen tree.
func (m *Model) Nodes() int { return len(m.nodes) }

// Score is the call's anomaly score, 0–255 for [0, 1].
func (m *Model) Score(f Features) uint8 { return m.scoreBins(m.bin(f)) }

func (m *Model) scoreBins(b bins) uint8 {
	nodes := m.nodes
	i := uint32(0)
	for {
		n := &nodes[i]
		if n.Feat == leafFeat {
			return n.Score
		}
		if goesLeft(int(n.Feat), n.Val, b[n.Feat]) {
			i = n.Left
		} else {
			i = n.Right
		}
	}
}

// Train fits a model to the logged calls (see the package comment for how
// a tree is trained with no labels).
func Train(calls []Features, o TrainOptions) (*Model, error) {
	if len(calls) < 20 {
		return nil, fmt.Errorf("anomaly: %d calls is too few to learn what is normal; train on an audit log with at least 20 calls", len(calls))
	}
	o = o.withDefaults()
	m := &Model{callers: topVocab(calls, func(f Features) string { return f.Caller }, maxCallers),
		tools: topVocab(calls, func(f Features) string { return f.Tool }, maxTools)}
	pts := make([]point, 0, len(calls))
	for _, c := range calls {
		// A logged first call of a tool is not evidence that first calls
		// are usual where it fell: every caller's first calls are at the
		// start of its history (the log's start, most often), and learning
		// them would teach the tree that a novel tool is fine at that
		// caller's hours — the very anomaly the feature is for. They still
		// set the vocabularies.
		if c.NovelTool && !o.KeepFirstCalls {
			continue
		}
		pts = append(pts, point{b: m.bin(c)})
	}
	if len(pts) < 20 {
		return nil, fmt.Errorf("anomaly: %d calls are not a tool's first call by their caller; train on an audit log with at least 20", len(pts))
	}
	if len(pts)*o.RefPerCall > MaxReference { // a long log: fewer, heavier reference points
		o.RefPerCall = max(1, MaxReference/len(pts))
	}
	k := len(pts) * o.RefPerCall
	kc := int(float64(k) * o.Conditional)
	pts = append(pts, conditionalReference(pts, kc, o.Seed)...)
	pts = append(pts, reference(k-kc, o.Seed)...)
	root := grow(pts, 0, 1/float64(o.RefPerCall), o)
	m.nodes = compile(root)
	return m.sealed()
}

// MaxReference bounds the reference sample (each point is 8 bytes and is
// scanned once per tree level): past it, fewer reference points per call.
const MaxReference = 8 << 20

// topVocab keeps the most frequent names (ties by name, so training is
// deterministic); the rest share the unknown bin.
func topVocab(calls []Features, key func(Features) string, max int) vocab {
	n := map[string]int{}
	for _, c := range calls {
		n[key(c)]++
	}
	names := make([]string, 0, len(n))
	for k := range n {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if n[names[i]] != n[names[j]] {
			return n[names[i]] > n[names[j]]
		}
		return names[i] < names[j]
	})
	if len(names) > max {
		names = names[:max]
	}
	v := vocab{}
	for i, k := range names {
		v[k] = uint8(i + 1)
	}
	return v
}

func fixed(s float64) uint8 { return uint8(math.Round(s * 255)) }

// compile lays the tree out as a flat array, root first.
func compile(root *tnode) []node {
	var out []node
	var add func(t *tnode) uint32
	add = func(t *tnode) uint32 {
		i := uint32(len(out))
		out = append(out, node{})
		if t.leaf {
			out[i] = node{Feat: leafFeat, Score: fixed(t.score)}
			return i
		}
		l := add(t.left)
		r := add(t.right)
		out[i] = node{Feat: uint8(t.feat), Val: t.val, Left: l, Right: r}
		return i
	}
	add(root)
	return out
}

func (m *Model) toFile() file {
	f := file{Format: FormatVersion, Nodes: m.nodes}
	f.Callers = names(m.callers)
	f.Tools = names(m.tools)
	return f
}

func names(v vocab) []string {
	out := make([]string, len(v))
	for k, i := range v {
		out[i-1] = k
	}
	return out
}

// sealed sets the version from the encoded content.
func (m *Model) sealed() (*Model, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	m.version = hex.EncodeToString(sum[:6])
	return m, nil
}

// MarshalJSON is the model file's content.
func (m *Model) MarshalJSON() ([]byte, error) { return json.Marshal(m.toFile()) }

// Parse reads a model file's content and checks that its tree is well
// formed (every index in range, no cycle: children come after parents).
func Parse(b []byte) (*Model, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("anomaly: model file is not a model (%v); make one with `airs guard train --out FILE`", err)
	}
	if f.Format != FormatVersion {
		return nil, fmt.Errorf("anomaly: model format %d, this airs reads %d; retrain with `airs guard train`", f.Format, FormatVersion)
	}
	if len(f.Nodes) == 0 || len(f.Callers) > maxCallers || len(f.Tools) > maxTools {
		return nil, errors.New("anomaly: model file is malformed (no tree, or vocabularies too large); retrain with `airs guard train`")
	}
	for i, n := range f.Nodes {
		if n.Feat == leafFeat {
			continue
		}
		if int(n.Feat) >= numFeatures || int(n.Val) >= binCount[n.Feat] ||
			n.Left <= uint32(i) || n.Right <= uint32(i) || int(n.Left) >= len(f.Nodes) || int(n.Right) >= len(f.Nodes) {
			return nil, fmt.Errorf("anomaly: model file is malformed at node %d; retrain with `airs guard train`", i)
		}
	}
	m := &Model{nodes: slices.Clone(f.Nodes), callers: vocab{}, tools: vocab{}}
	for i, k := range f.Callers {
		m.callers[k] = uint8(i + 1)
	}
	for i, k := range f.Tools {
		m.tools[k] = uint8(i + 1)
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
