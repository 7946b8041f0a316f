package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Report is what Verify found.
type Report struct {
	Records  int    // complete, chained records before the first break
	LastSeq  uint64 // seq of the last good record
	LastHash string // hex SHA-256 of the last good line: anchor it elsewhere
	TornTail int64  // bytes after the last newline (a crash's torn write; Open truncates it)
	Break    *Break // first broken or missing link; nil when the chain holds
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
}

// NewChain starts a check at the first record.
func NewChain() *Chain { return &Chain{rep: Report{LastHash: Genesis}, prev: Genesis} }

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
	if want := c.rep.LastSeq + 1; r.Seq != want {
		return brk(fmt.Sprintf("seq %d, want %d (records missing or reordered)", r.Seq, want))
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
