package audit

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
)

// Report is what Verify found.
type Report struct {
	Records  int    // complete, chained records before the first break
	LastSeq  uint64 // seq of the last good record
	LastHash string // hex SHA-256 of the last good line: anchor it elsewhere
	TornTail int64  // bytes after the last newline (a crash's torn write; Open truncates it)
	Break    *Break // first broken or missing link; nil when the chain holds
	// Chains is, for a log kept as several chains (Chains), each chain's
	// records and head, by chain id; nil for a log of one chain. LastSeq
	// and LastHash are then the last record's in the merged order: anchor
	// every chain's LastHash, not that one alone.
	Chains []ChainReport
}

// ChainReport is one chain of a log kept as several chains.
type ChainReport struct {
	Chain    uint64 `json:"chain"`
	Records  int    `json:"records"`
	LastSeq  uint64 `json:"last_seq"`         // 0 before the first record
	LastHash string `json:"last_hash"`        // Genesis before the first record
	Origin   string `json:"origin,omitempty"` // who started it, as its store recorded (host and pid)
}

// OK reports whether the whole chain verified (a torn tail is not a break:
// it was never acknowledged).
func (r *Report) OK() bool { return r.Break == nil }

// Break locates the first place where the chain does not hold.
type Break struct {
	Line   int    // 1-based line number
	Offset int64  // byte offset of the line
	Seq    uint64 // the seq the line claims (0 if unreadable)
	Reason string
}

func (b *Break) String() string {
	return fmt.Sprintf("line %d (offset %d, seq %d): %s", b.Line, b.Offset, b.Seq, b.Reason)
}

// Verify reads the log at path from the start and checks every link: each
// line is a record, seqs run 1, 2, 3… without gaps, and each Prev is the
// SHA-256 of the line before (Genesis for the first). It stops at the first
// break. The error is only for I/O failures.
func Verify(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := NewChain()
	br := bufio.NewReaderSize(f, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			c.rep.TornTail = int64(len(line))
			return c.Report(), nil
		}
		if err != nil {
			return c.Report(), err
		}
		if !c.Add(line[:len(line)-1]) {
			return c.Report(), nil
		}
	}
}

// Chain checks a log's lines in order with Verify's rules, wherever they
// are stored: a backend that keeps the lines elsewhere (a database) feeds
// them to Add and reports what Report says.
type Chain struct {
	rep    Report
	prev   string
	lineNo int
	off    int64
	// of: the chain this checks in a log kept as several chains
	// (NewChainOf); 0 for a log of one chain.
	of uint64
}

// NewChain starts a check at the first record of a log of one chain: seqs
// run 1, 2, 3… and no line names a chain.
func NewChain() *Chain { return &Chain{rep: Report{LastHash: Genesis}, prev: Genesis} }

// NewChainOf starts a check at the first record of chain id (not 0) of a
// log kept as several chains (AppendChainLine): every line must name chain
// id, and its seq, a number from the sequence every chain shares, must be
// greater than the previous line's. Gaps are expected (the other chains'
// records are in them); a record removed from the chain still breaks the
// link after it, as in a log of one chain.
func NewChainOf(id uint64) *Chain {
	c := NewChain()
	c.of = id
	return c
}

// Add checks the next line (without its newline) and reports whether the
// chain still holds; after the first break it stays false and ignores
// further lines.
func (c *Chain) Add(line []byte) bool {
	if c.rep.Break != nil {
		return false
	}
	c.lineNo++
	var r Record
	brk := func(reason string) bool {
		c.rep.Break = &Break{Line: c.lineNo, Offset: c.off, Seq: r.Seq, Reason: reason}
		return false
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return brk("not a record: " + err.Error())
	}
	switch {
	case r.Chain != c.of && c.of == 0:
		return brk(fmt.Sprintf("the record names chain %d in a log of one chain (as a file, or a database's chain 0): moved from another chain", r.Chain))
	case r.Chain != c.of:
		return brk(fmt.Sprintf("the record names chain %d, it is filed in chain %d (moved between chains)", r.Chain, c.of))
	case c.of == 0 && r.Seq != c.rep.LastSeq+1:
		return brk(fmt.Sprintf("seq %d, want %d (records missing or reordered)", r.Seq, c.rep.LastSeq+1))
	case c.of != 0 && r.Seq <= c.rep.LastSeq:
		return brk(fmt.Sprintf("seq %d after seq %d in its chain (records reordered)", r.Seq, c.rep.LastSeq))
	}
	if r.Prev != c.prev {
		return brk("prev hash does not match the previous line (edited, removed or inserted record)")
	}
	sum := sha256.Sum256(line)
	c.prev = hex.EncodeToString(sum[:])
	c.rep.Records++
	c.rep.LastSeq = r.Seq
	c.rep.LastHash = c.prev
	c.off += int64(len(line)) + 1
	return true
}

// Break marks the chain broken at the next line for a reason the lines
// alone cannot show (a backend's own bookkeeping disagreeing with them),
// unless it already broke.
func (c *Chain) Break(seq uint64, reason string) {
	if c.rep.Break == nil {
		c.rep.Break = &Break{Line: c.lineNo + 1, Offset: c.off, Seq: seq, Reason: reason}
	}
}

// Report is what the lines added so far show.
func (c *Chain) Report() *Report {
	rep := c.rep
	return &rep
}

// Chains checks a log kept as several chains merged into one order
// (store/pg: a chain per process, every record numbered from one sequence
// that all chains share), row by row in that order, then the chains' heads
// (Heads). Each chain is checked by Chain's rules: chain 0 — the log as it
// was kept before it had several chains — by a log of one chain's, every
// other by NewChainOf's. The merge: the rows' seqs increase, each line
// says its row's seq (so no record can be moved in the merged order
// without its hash changing) and names the chain it is filed in (so none
// can be moved to another chain); a seq is one row's, so no record is in
// two chains.
type Chains struct {
	rep    Report
	chains map[uint64]*Chain
	rows   int
}

// NewChains starts a check at the first row.
func NewChains() *Chains { return &Chains{rep: Report{LastHash: Genesis}, chains: map[uint64]*Chain{}} }

// Add checks the next row in seq order: the record at seq filed in chain,
// its line without a newline. It reports whether everything still holds;
// after the first break it stays false. Break.Line is the row's number in
// the merged order, and Offset 0.
func (m *Chains) Add(chain, seq uint64, line []byte) bool {
	if m.rep.Break != nil {
		return false
	}
	m.rows++
	brk := func(s uint64, reason string) bool {
		m.rep.Break = &Break{Line: m.rows, Seq: s, Reason: reason}
		return false
	}
	if m.rows > 1 && seq <= m.rep.LastSeq {
		return brk(seq, fmt.Sprintf("row seq %d after row seq %d (the rows are not in seq order)", seq, m.rep.LastSeq))
	}
	c := m.chains[chain]
	if c == nil {
		if chain == 0 {
			c = NewChain()
		} else {
			c = NewChainOf(chain)
		}
		m.chains[chain] = c
	}
	if !c.Add(line) {
		return brk(c.rep.Break.Seq, fmt.Sprintf("chain %d: %s", chain, c.rep.Break.Reason))
	}
	if c.rep.LastSeq != seq {
		return brk(c.rep.LastSeq, fmt.Sprintf("chain %d: the record says seq %d, its row is seq %d (moved in the merged order)", chain, c.rep.LastSeq, seq))
	}
	m.rep.Records++
	m.rep.LastSeq = seq
	m.rep.LastHash = c.rep.LastHash
	return true
}

// ChainHead is a chain's end as its store keeps it apart from the records:
// the last record's seq and hash (0 and Genesis before the first).
type ChainHead struct {
	Chain  uint64
	Seq    uint64
	Hash   string // hex
	Origin string // who started the chain (host and pid), for the report
}

// Heads checks, after the last row, the heads the store keeps: one for
// each chain 0, 1, 2… without a gap (a chain takes the next id when it
// starts, so a gap is a chain deleted with its head), one for every chain
// that has records, and each naming its chain's last record — which
// catches records cut from a chain's end. It fills Report's Chains (heads
// in id order). Unless the rows already broke; a break here is at Line
// rows+1. What it cannot catch: the newest chain deleted with its head, or
// any chain's records and head rewritten consistently — anchor the chains'
// heads elsewhere when that matters.
func (m *Chains) Heads(heads []ChainHead) {
	heads = slices.Clone(heads)
	slices.SortFunc(heads, func(a, b ChainHead) int { return cmp.Compare(a.Chain, b.Chain) })
	m.rep.Chains = make([]ChainReport, 0, len(heads))
	for _, h := range heads {
		cr := ChainReport{Chain: h.Chain, LastHash: Genesis, Origin: h.Origin}
		if c := m.chains[h.Chain]; c != nil {
			cr.Records, cr.LastSeq, cr.LastHash = c.rep.Records, c.rep.LastSeq, c.rep.LastHash
		}
		m.rep.Chains = append(m.rep.Chains, cr)
	}
	if m.rep.Break != nil {
		return
	}
	brk := func(s uint64, reason string) {
		m.rep.Break = &Break{Line: m.rows + 1, Seq: s, Reason: reason}
	}
	have := map[uint64]bool{}
	for i, h := range heads {
		have[h.Chain] = true
		if h.Chain != uint64(i) {
			if i > 0 && h.Chain == heads[i-1].Chain {
				brk(h.Seq, fmt.Sprintf("chain %d has two heads", h.Chain))
			} else {
				brk(h.Seq, fmt.Sprintf("chain %d has no head (the chains go on at %d): a chain deleted with its head?", i, h.Chain))
			}
			return
		}
		cr := m.rep.Chains[i]
		switch {
		case h.Seq != cr.LastSeq:
			brk(h.Seq, fmt.Sprintf("chain %d: the chain head says the last record is seq %d, the chain's records end at seq %d (records cut from its end, or the head edited)", h.Chain, h.Seq, cr.LastSeq))
			return
		case h.Hash != cr.LastHash:
			brk(h.Seq, fmt.Sprintf("chain %d: the chain head's hash is not its last record's (the last record or the head edited)", h.Chain))
			return
		}
	}
	ids := slices.Sorted(maps.Keys(m.chains))
	for _, id := range ids {
		if !have[id] {
			brk(m.chains[id].rep.LastSeq, fmt.Sprintf("chain %d has records but no head (its head deleted, or records filed in a chain that never started)", id))
			return
		}
	}
}

// Report is what the rows (and heads) checked so far show.
func (m *Chains) Report() *Report {
	rep := m.rep
	return &rep
}

// Tail returns the last n complete records of the log at path, oldest
// first, reading from the end of the file. A torn tail is skipped.
func Tail(path string, n int) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end, err := lastNewline(f, fi.Size())
	if err != nil {
		return nil, err
	}
	lines, err := lastLines(f, end, n)
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(lines))
	for _, l := range lines {
		var r Record
		if err := json.Unmarshal(l, &r); err != nil {
			return out, fmt.Errorf("audit: tail: %w: %.80q", ErrCorrupt, l)
		}
		out = append(out, r)
	}
	return out, nil
}
