package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reader reads a session log record by record.
type Reader struct {
	br   *bufio.Reader
	line int
	torn bool
}

// NewReader reads records from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next record, or io.EOF after the last. A last line
// without its newline is a write torn by a crash (or one still in
// progress): it is skipped and Torn reports it. Blank lines are skipped. A
// line that is not a record, or has a version this package does not know,
// is an error naming the line.
func (r *Reader) Next() (Record, error) {
	for {
		line, err := r.br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			// Unterminated last line.
			r.torn = true
			return Record{}, io.EOF
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return Record{}, io.EOF
			}
			return Record{}, err
		}
		r.line++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rec, err := DecodeLine(line)
		if err != nil {
			return Record{}, fmt.Errorf("session log line %d: %w", r.line, err)
		}
		return rec, nil
	}
}

// DecodeLine decodes one line of the format (numbers as json.Number),
// refusing a line without a version or of a newer one — for readers of
// lines kept elsewhere than a file (store/pg).
func DecodeLine(line []byte) (Record, error) {
	rec, err := decodeRecord(line)
	if err != nil {
		return Record{}, err
	}
	switch {
	case rec.V == 0:
		return Record{}, errors.New("no format version (\"v\"): not a session record")
	case rec.V > Version:
		return Record{}, fmt.Errorf("format v%d is newer than this reader (v%d)", rec.V, Version)
	}
	return rec, nil
}

// Torn reports whether the log ended with an unterminated line.
func (r *Reader) Torn() bool { return r.torn }

// ReadAll reads every record.
func ReadAll(rd io.Reader) ([]Record, error) {
	r := NewReader(rd)
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// ReadFile reads every record of the log at path.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f)
}

// Merge folds feedback records into the request records they refer to (the
// latest feedback wins) and returns the requests in log order, plus the
// number of feedback records whose request is not in recs.
func Merge(recs []Record) (requests []Record, orphans int) {
	index := map[string]int{}
	for _, r := range recs {
		switch r.Kind {
		case KindFeedback:
			i, ok := index[r.Ref]
			if !ok || r.Feedback == nil {
				orphans++
				continue
			}
			fb := *r.Feedback
			if fb.Time.IsZero() {
				fb.Time = r.Time
			}
			requests[i].Feedback = &fb
		default:
			index[r.ID] = len(requests)
			requests = append(requests, r)
		}
	}
	return requests, orphans
}
