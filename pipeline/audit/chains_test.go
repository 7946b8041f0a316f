package audit

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// chainRow is one row of a log kept as several chains, as a store keeps it.
type chainRow struct {
	chain, seq uint64
	line       []byte
}

// chainedLog builds a log of several chains the way store/pg does: the
// records of legacy (a log of one chain, chain 0) first, then n records
// dealt round-robin to chains 1..k, each with the next seq. It returns the
// rows in seq order and the heads.
func chainedLog(legacy, k, n int) ([]chainRow, []ChainHead) {
	var rows []chainRow
	heads := []ChainHead{{Chain: 0, Hash: Genesis}}
	var seq uint64
	var prev [32]byte
	for i := range legacy {
		seq++
		line, h := AppendLine(nil, seq, prev, rec(i).AppendBody(nil))
		rows = append(rows, chainRow{0, seq, line})
		prev = h
		heads[0].Seq, heads[0].Hash = seq, hex.EncodeToString(h[:])
	}
	prevs := make([][32]byte, k+1)
	for i := range n {
		c := uint64(i%k + 1)
		if int(c) >= len(heads) {
			heads = append(heads, ChainHead{Chain: c, Hash: Genesis})
		}
		seq++
		line, h := AppendChainLine(nil, seq, c, prevs[c], rec(100+i).AppendBody(nil))
		rows = append(rows, chainRow{c, seq, line})
		prevs[c] = h
		heads[c].Seq, heads[c].Hash = seq, hex.EncodeToString(h[:])
	}
	return rows, heads
}

func checkChains(rows []chainRow, heads []ChainHead) *Report {
	m := NewChains()
	for _, r := range rows {
		if !m.Add(r.chain, r.seq, r.line) {
			break
		}
	}
	m.Heads(heads)
	return m.Report()
}

func TestChainsVerify(t *testing.T) {
	rows, heads := chainedLog(4, 3, 12)
	rep := checkChains(rows, heads)
	if !rep.OK() || rep.Records != 16 || rep.LastSeq != 16 {
		t.Fatalf("an intact log of 4 chains: %+v (break %v)", rep, rep.Break)
	}
	want := []int{4, 4, 4, 4}
	for i, c := range rep.Chains {
		if c.Chain != uint64(i) || c.Records != want[i] || c.LastHash != heads[i].Hash {
			t.Fatalf("chain %d: %+v, want %d records ending at %s", i, c, want[i], heads[i].Hash)
		}
	}
	// Chain 0 is a file log's lines, byte for byte: the same check passes.
	var file []byte
	for _, r := range rows[:4] {
		file = append(append(file, r.line...), '\n')
	}
	c := NewChain()
	for _, l := range bytes.Split(bytes.TrimSuffix(file, []byte("\n")), []byte("\n")) {
		c.Add(l)
	}
	if c.Report().LastHash != heads[0].Hash {
		t.Fatal("chain 0 does not verify as a file log")
	}
	if rep := checkChains(nil, []ChainHead{{Chain: 0, Hash: Genesis}}); !rep.OK() || rep.Records != 0 {
		t.Fatalf("an empty log: %+v", rep)
	}
}

func TestChainsFindTampering(t *testing.T) {
	// Seqs 1–4: chain 0; then 5, 8, 11, 14 chain 1; 6, 9, 12, 15 chain 2;
	// 7, 10, 13, 16 chain 3.
	for _, tc := range []struct {
		name   string
		tamper func(rows []chainRow, heads []ChainHead) ([]chainRow, []ChainHead)
		line   int
		reason string
	}{
		{"edit a record", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			r[7].line = bytes.Replace(r[7].line, []byte(`"caller":"alice"`), []byte(`"caller":"mallory"`), 1)
			return r, h
		}, 11, "chain 1: prev hash"},
		{"delete from a chain's middle", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			return append(r[:7:7], r[8:]...), h
		}, 10, "chain 1: prev hash"},
		{"delete from chain 0", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			return append(r[:1:1], r[2:]...), h
		}, 2, "chain 0: seq 3, want 2"},
		{"cut one chain's tail", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			return append(r[:13:13], r[14:]...), h // seq 14, chain 1's last
		}, 16, "chain 1: the chain head says the last record is seq 14, the chain's records end at seq 11"},
		{"move a record to another chain", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			r[7].chain = 2
			return r, h
		}, 8, "names chain 1, it is filed in chain 2"},
		{"move a record to another chain, line rewritten", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			r[7].chain = 2
			r[7].line = bytes.Replace(r[7].line, []byte(`"chain":1,`), []byte(`"chain":2,`), 1)
			return r, h
		}, 8, "chain 2: prev hash"},
		{"move a chain 1 record to chain 0", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			r[4].chain = 0
			return r, h
		}, 5, "names chain 1 in a log of one chain"},
		{"move a chain 0 record to chain 1", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			r[3].chain = 1
			return r, h
		}, 4, "names chain 0, it is filed in chain 1"},
		{"swap two records' places across chains", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			r[6].line, r[7].line = r[7].line, r[6].line // seqs 7 (chain 3) and 8 (chain 1)
			r[6].chain, r[7].chain = r[7].chain, r[6].chain
			return r, h
		}, 7, "chain 1: the record says seq 8, its row is seq 7"},
		{"swap places across chains, seqs in the lines rewritten", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			a := bytes.Replace(r[7].line, []byte(`{"seq":8,`), []byte(`{"seq":7,`), 1)
			b := bytes.Replace(r[6].line, []byte(`{"seq":7,`), []byte(`{"seq":8,`), 1)
			r[6] = chainRow{1, 7, a}
			r[7] = chainRow{3, 8, b}
			return r, h
		}, 10, "chain 3: prev hash"},
		{"a record in two chains", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			return append(r, chainRow{2, 17, r[7].line}), h
		}, 17, "names chain 1, it is filed in chain 2"},
		{"a record twice in its chain", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			return append(r, chainRow{1, 17, r[7].line}), h
		}, 17, "seq 8 after seq 14 in its chain"},
		{"rows out of seq order", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			r[8], r[9] = r[9], r[8]
			return r, h
		}, 10, "row seq 9 after row seq 10"},
		{"a chain deleted with its head", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			var kept []chainRow
			for _, x := range r {
				if x.chain != 2 {
					kept = append(kept, x)
				}
			}
			return kept, append(h[:2:2], h[3])
		}, 13, "chain 2 has no head (the chains go on at 3)"},
		{"a head deleted", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			return r, h[:3]
		}, 17, "chain 3 has records but no head"},
		{"a head edited", func(r []chainRow, h []ChainHead) ([]chainRow, []ChainHead) {
			h[2].Hash = strings.Repeat("0", 63) + "1"
			return r, h
		}, 17, "chain 2: the chain head's hash is not its last record's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, heads := chainedLog(4, 3, 12)
			rows, heads = tc.tamper(rows, heads)
			rep := checkChains(rows, heads)
			if rep.OK() {
				t.Fatalf("went unnoticed: %+v", rep)
			}
			if rep.Break.Line != tc.line || !strings.Contains(rep.Break.Reason, tc.reason) {
				t.Fatalf("break %v, want line %d saying %q", rep.Break, tc.line, tc.reason)
			}
		})
	}
}

// A file log's verify refuses a line that names a chain: no file line does.
func TestChainRejectsChainedLineInAFile(t *testing.T) {
	line, _ := AppendChainLine(nil, 1, 1, [32]byte{}, rec(1).AppendBody(nil))
	c := NewChain()
	if c.Add(line) || !strings.Contains(c.Report().Break.Reason, "names chain 1 in a log of one chain") {
		t.Fatalf("a chained line in a one-chain log: %+v", c.Report().Break)
	}
}
