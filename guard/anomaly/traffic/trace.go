package traffic

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Labels of a trace line: normal, or the kind of anomaly it is.
const (
	LabelNormal   = "normal"
	LabelBurst    = "burst"     // the agent calling far faster than it does
	LabelNovel    = "novel"     // a tool the agent never called (others may have)
	LabelPayload  = "payload"   // arguments far larger than the agent's usual
	LabelOffHours = "off-hours" // an hour of the day the agent never works
	LabelPath     = "path"      // a folder the agent never touched
)

var labels = map[string]bool{LabelNormal: true, LabelBurst: true, LabelNovel: true, LabelPayload: true,
	LabelOffHours: true, LabelPath: true}

// TraceLine is one recorded call: a line of a trace file (JSON Lines).
type TraceLine struct {
	Time      time.Time       `json:"time"`
	Agent     string          `json:"agent"`
	Tool      string          `json:"tool"`
	ArgsBytes int             `json:"args_bytes"`
	Label     string          `json:"label"`
	Args      json.RawMessage `json:"args,omitempty"` // the arguments, when recorded
	// Factor is how far an anomaly is from the agent's usual (a burst's
	// rate, a payload's size, as a multiple); 0 when not given.
	Factor float64 `json:"factor,omitempty"`
}

// ReadTrace reads a trace (JSON Lines, in time order; blank lines are
// skipped). A line out of time order, of an unknown label or without an
// agent or tool is refused with its line number.
func ReadTrace(r io.Reader) ([]TraceLine, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var out []TraceLine
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 && !isBlank(b) {
			var l TraceLine
			if jerr := json.Unmarshal(b, &l); jerr != nil {
				return nil, fmt.Errorf("trace line %d: %v (want {\"time\":RFC3339,\"agent\",\"tool\",\"args_bytes\",\"label\"})", n, jerr)
			}
			switch {
			case l.Agent == "" || l.Tool == "" || l.Time.IsZero():
				return nil, fmt.Errorf("trace line %d: time, agent and tool are required", n)
			case !labels[l.Label]:
				return nil, fmt.Errorf("trace line %d: label %q: want normal, burst, novel, payload, off-hours or path", n, l.Label)
			case len(out) > 0 && l.Time.Before(out[len(out)-1].Time):
				return nil, fmt.Errorf("trace line %d: %s is before the line above it; a trace is in time order", n, l.Time.Format(time.RFC3339Nano))
			}
			if l.ArgsBytes == 0 {
				l.ArgsBytes = len(l.Args)
			}
			out = append(out, l)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// WriteTrace writes lines as a trace file.
func WriteTrace(w io.Writer, lines []TraceLine) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}
