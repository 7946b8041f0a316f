package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// tailState is where the chain ends in an existing file.
type tailState struct {
	seq  uint64
	hash [32]byte
	torn int64 // bytes truncated after the last newline
	size int64 // the file's size afterwards
}

// recoverTail finds the last complete line, truncates anything after it
// (a torn, never-acknowledged write) and returns the chain's end. It reads
// the file backwards from the end, so opening a large log is cheap.
func recoverTail(f *os.File) (tailState, error) {
	var st tailState
	fi, err := f.Stat()
	if err != nil {
		return st, err
	}
	size := fi.Size()
	end, err := lastNewline(f, size)
	if err != nil {
		return st, err
	}
	if end < size {
		st.torn = size - end
		if err := f.Truncate(end); err != nil {
			return st, fmt.Errorf("audit: truncating torn tail: %w", err)
		}
		if err := syncData(f); err != nil {
			return st, err
		}
	}
	st.size = end
	if end == 0 {
		copy(st.hash[:], genesisHash[:])
		return st, nil
	}
	lines, err := lastLines(f, end, 1)
	if err != nil {
		return st, err
	}
	var r Record
	if len(lines) != 1 || json.Unmarshal(lines[0], &r) != nil || r.Seq == 0 {
		return st, fmt.Errorf("%w: last line is not a record (run verify)", ErrCorrupt)
	}
	st.seq, st.hash = r.Seq, sha256.Sum256(lines[0])
	return st, nil
}

// genesisHash is the all-zero hash that Genesis spells in hex.
var genesisHash [32]byte

const chunk = 64 << 10

// lastNewline returns the offset just after the last '\n' before size, or 0.
func lastNewline(r io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		p := buf[:end-start]
		if _, err := r.ReadAt(p, start); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// lastLines returns up to n complete lines (without '\n') that end at or
// before end, which must be 0 or just after a '\n'. Oldest first.
func lastLines(r io.ReaderAt, end int64, n int) ([][]byte, error) {
	if n <= 0 || end == 0 {
		return nil, nil
	}
	// Read backwards until n+1 newlines are seen (the one ending the last
	// line counts) or the file starts.
	var data []byte
	pos := end
	for pos > 0 && bytes.Count(data, []byte{'\n'}) <= n {
		start := max(pos-chunk, 0)
		p := make([]byte, pos-start)
		if _, err := r.ReadAt(p, start); err != nil && err != io.EOF {
			return nil, err
		}
		data = append(p, data...)
		pos = start
	}
	data = bytes.TrimSuffix(data, []byte{'\n'})
	lines := bytes.Split(data, []byte{'\n'})
	if pos > 0 {
		lines = lines[1:] // the first piece may be a partial line
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}
