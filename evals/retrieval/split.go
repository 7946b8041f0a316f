package retrieval

import (
	"hash/fnv"
	"strings"
)

// Part is where a query of a split dataset belongs.
type Part string

const (
	// PartTrain queries train the model.
	PartTrain Part = "train"
	// PartDev queries fit the fusion weights; never trained on.
	PartDev Part = "dev"
	// PartTest queries are held out (their tools are in training).
	PartTest Part = "test"
	// PartUnseen queries need a tool that is absent from training: the
	// split by tool.
	PartUnseen Part = "unseen"
	// PartUnseenDev queries need a tool absent from training too, from
	// another half of the held-out tools: with dev, they fit the fusion
	// weights, so that the weights are chosen for tools the model never
	// saw as much as for those it did.
	PartUnseenDev Part = "unseen-dev"
)

// SplitSalt is mixed into every hash of the split, so that the split can
// be redrawn by changing it (the trained model records it).
const SplitSalt = "airs-retrieval-split-1"

// splitDatasets are the datasets split into train / dev / test / unseen;
// every other dataset is either training data only (BFCL) or evaluation
// data only (MCP tools), never both.
var splitDatasets = map[string]bool{"metatool": true, "stabletoolbench": true}

// IsSplit tells whether a dataset is split by SplitQuery.
func IsSplit(name string) bool { return splitDatasets[name] }

func hashMod(s string, n uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(SplitSalt))
	h.Write([]byte{0})
	h.Write([]byte(s))
	return h.Sum64() % n
}

// toolKey is the unit tools are held out by: a MetaTool plugin, a RapidAPI
// tool (all its endpoints together, so that no sibling endpoint leaks).
func toolKey(ds *Dataset, docID string) string {
	if ds.Name == "stabletoolbench" {
		if i := strings.IndexByte(docID, '/'); i >= 0 {
			return ds.Name + ":" + strings.ToLower(docID[:i])
		}
	}
	return ds.Name + ":" + strings.ToLower(docID)
}

// HeldOutTool tells whether the document is held out of training (one in
// five tools of a split dataset: half for unseen, half for unseen-dev).
func HeldOutTool(ds *Dataset, docID string) bool {
	return heldOut(ds, docID) != ""
}

func heldOut(ds *Dataset, docID string) Part {
	if !IsSplit(ds.Name) {
		return ""
	}
	switch hashMod("tool:"+toolKey(ds, docID), 10) {
	case 0:
		return PartUnseen
	case 5:
		return PartUnseenDev
	}
	return ""
}

// SplitQuery places a query: unseen when any of its tools is held out for
// testing, else unseen-dev when any is held out for development;
// otherwise by a hash of its normalised text (so duplicated texts land in
// the same part): 20% test, 10% dev, 70% train.
func SplitQuery(ds *Dataset, q Query) Part {
	part := Part("")
	for _, g := range q.Gold {
		switch heldOut(ds, g) {
		case PartUnseen:
			return PartUnseen
		case PartUnseenDev:
			part = PartUnseenDev
		}
	}
	if part != "" {
		return part
	}
	switch hashMod("query:"+ds.Name+":"+strings.ToLower(strings.Join(strings.Fields(q.Text), " ")), 10) {
	case 0, 1:
		return PartTest
	case 2:
		return PartDev
	}
	return PartTrain
}

// FilterPart keeps the queries of a split dataset that belong to part; a
// dataset that is not split is returned as is for the evaluation parts
// (test, unseen, all) and emptied for train and dev.
func FilterPart(ds Dataset, part Part) Dataset {
	if !IsSplit(ds.Name) {
		if part == PartTrain || part == PartDev || part == PartUnseenDev {
			ds.Queries = nil
		}
		return ds
	}
	out := ds
	out.Queries = nil
	for _, q := range ds.Queries {
		if SplitQuery(&ds, q) == part {
			out.Queries = append(out.Queries, q)
		}
	}
	out.Name = ds.Name + "/" + string(part)
	return out
}

// HeldOutPool restricts a split dataset's tool pool to its held-out tools
// (unseen and unseen-dev: none the model was trained on), each query's
// right tools to those in the pool, and drops the queries left with none.
// Asked among held-out tools only, a ranker cannot gain by demoting the
// tools it was trained on, which a held-out-tool query never needs: what
// is left is how well it ranks tools it never saw against each other.
// Other datasets are returned as they are.
func HeldOutPool(ds Dataset) Dataset {
	base := Dataset{Name: strings.SplitN(ds.Name, "/", 2)[0]}
	if !IsSplit(base.Name) {
		return ds
	}
	out := Dataset{Name: ds.Name + "+held-out-pool"}
	in := map[string]bool{}
	for _, d := range ds.Docs {
		if HeldOutTool(&base, d.ID) {
			out.Docs = append(out.Docs, d)
			in[d.ID] = true
		}
	}
	for _, q := range ds.Queries {
		var gold []string
		for _, g := range q.Gold {
			if in[g] {
				gold = append(gold, g)
			}
		}
		if len(gold) > 0 {
			q.Gold = gold
			out.Queries = append(out.Queries, q)
		}
	}
	return out
}
