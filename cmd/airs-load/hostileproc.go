package main

// The hostile agent of `airs-load fairness` runs, by default, in a process
// of its own, as a second agent on a shared server does. In the quiet
// agent's process its goroutines (writing 750 kB bodies, flooding) and its
// garbage collection would share that process's scheduler and heap with the
// quiet agent's clients: a quiet call's latency would then include the
// hostile agent's load-generator work, which is not the server's doing.
//
// The two processes speak JSON lines: the parent sends the hostile agent's
// settings, the child answers when its request bodies are built; then for
// each hostile round the parent sends the round's length and the child
// answers, when the round is over, with what it got (HTTP statuses per
// abuse). The child ends when its input ends.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// hostileAgent runs the hostile agent's abuses, in this process or another.
type hostileAgent interface {
	// round starts the abuses for d, or until ctx ends; the function it
	// returns waits for them to end and answers their statuses.
	round(ctx context.Context, d time.Duration) func() (map[string]map[string]int64, error)
	// cpuSeconds is the CPU time of the hostile agent's own process (0
	// when it runs in this one).
	cpuSeconds() float64
}

func (h *hostile) round(ctx context.Context, d time.Duration) func() (map[string]map[string]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	h.reset()
	var wg sync.WaitGroup
	h.start(ctx, &wg)
	return func() (map[string]map[string]int64, error) {
		wg.Wait()
		cancel()
		return h.statuses(), nil
	}
}

func (h *hostile) cpuSeconds() float64 { return 0 }

// hostileConfig is what the child needs of fairOptions.
type hostileConfig struct {
	Base            string   `json:"base"`
	Token           string   `json:"token"`
	WriteSpace      string   `json:"write_space"`
	SelectText      int      `json:"select_text"`
	PlanText        int      `json:"plan_text"`
	CompareText     int      `json:"compare_text"`
	PauseNs         int64    `json:"pause_ns"`
	HonorRetryAfter bool     `json:"honor_retry_after"`
	Abuses          []string `json:"abuses"` // null: all; []: none
}

func hostileConfigOf(o fairOptions) hostileConfig {
	c := hostileConfig{Base: o.base, Token: o.hostileTok, WriteSpace: o.writeSpace, SelectText: o.selectText,
		PlanText: o.planText, CompareText: o.compareText, PauseNs: int64(o.hostilePause), HonorRetryAfter: o.honorRetryAfter}
	if o.abuses != nil {
		c.Abuses = []string{}
		for _, a := range abuseNames {
			if o.abuses[a] {
				c.Abuses = append(c.Abuses, a)
			}
		}
	}
	return c
}

func (c hostileConfig) options() fairOptions {
	o := fairOptions{base: c.Base, hostileTok: c.Token, writeSpace: c.WriteSpace, selectText: c.SelectText,
		planText: c.PlanText, compareText: c.CompareText, hostilePause: time.Duration(c.PauseNs), honorRetryAfter: c.HonorRetryAfter}
	if c.Abuses != nil {
		o.abuses = map[string]bool{}
		for _, a := range c.Abuses {
			o.abuses[a] = true
		}
	}
	return o
}

// hostileMessage is one line from the child.
type hostileMessage struct {
	Ready    bool                        `json:"ready,omitempty"`
	Statuses map[string]map[string]int64 `json:"statuses,omitempty"`
	Error    string                      `json:"error,omitempty"`
}

// hostileRoleEnv names the child's role for a program that cannot be given
// it as its first argument (a test binary).
const hostileRoleEnv = "AIRS_LOAD_ROLE"

// hostileProcess is the hostile agent in a child process.
type hostileProcess struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
	enc *json.Encoder
}

// startHostileProcess starts this program as `airs-load fairness-hostile`
// and waits until its request bodies are built.
func startHostileProcess(o fairOptions) (*hostileProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the hostile agent's process: %w (or run it in this one: -hostile-in-process)", err)
	}
	cmd := exec.Command(exe, "fairness-hostile")
	if o.hostileNice != 0 {
		// Through nice(1): Linux priorities are per thread, and every thread
		// of the child must start at the lower one.
		nice, err := exec.LookPath("nice")
		if err != nil {
			return nil, fmt.Errorf("-hostile-nice needs nice(1): %w", err)
		}
		cmd = exec.Command(nice, "-n", strconv.Itoa(o.hostileNice), exe, "fairness-hostile")
	}
	cmd.Env = append(os.Environ(), hostileRoleEnv+"=fairness-hostile")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the hostile agent's process %s: %w (or run it in this one: -hostile-in-process)", exe, err)
	}
	p := &hostileProcess{cmd: cmd, in: in, out: json.NewDecoder(bufio.NewReader(out)), enc: json.NewEncoder(in)}
	if err := p.enc.Encode(hostileConfigOf(o)); err != nil {
		p.close()
		return nil, fmt.Errorf("the hostile agent's process: %w", err)
	}
	var m hostileMessage
	if err := p.out.Decode(&m); err != nil || !m.Ready {
		p.close()
		return nil, fmt.Errorf("the hostile agent's process did not start (%v %s)", err, m.Error)
	}
	return p, nil
}

func (p *hostileProcess) round(_ context.Context, d time.Duration) func() (map[string]map[string]int64, error) {
	err := p.enc.Encode(map[string]int64{"round_ns": int64(d)})
	return func() (map[string]map[string]int64, error) {
		if err != nil {
			return nil, fmt.Errorf("the hostile agent's process: %w", err)
		}
		var m hostileMessage
		if err := p.out.Decode(&m); err != nil {
			return nil, fmt.Errorf("the hostile agent's process ended: %w", err)
		}
		if m.Error != "" {
			return nil, errors.New("the hostile agent's process: " + m.Error)
		}
		if m.Statuses == nil { // an idle agent: nothing asked, nothing got
			m.Statuses = map[string]map[string]int64{}
		}
		return m.Statuses, nil
	}
}

func (p *hostileProcess) cpuSeconds() float64 { return procCPUSeconds(p.cmd.Process.Pid) }

// close ends the child: its input ends, so it returns.
func (p *hostileProcess) close() {
	p.in.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// runHostileChild is `airs-load fairness-hostile`: the hostile agent's
// process, driven over in and out by `airs-load fairness`.
func runHostileChild(in io.Reader, out io.Writer) int {
	dec, enc := json.NewDecoder(bufio.NewReader(in)), json.NewEncoder(out)
	var c hostileConfig
	if err := dec.Decode(&c); err != nil {
		fmt.Fprintln(os.Stderr, "airs-load fairness-hostile: started by `airs-load fairness`, which sends its settings on standard input:", err)
		return 2
	}
	h := newHostile(c.options())
	if enc.Encode(hostileMessage{Ready: true}) != nil {
		return 1
	}
	for {
		var r struct {
			RoundNs int64 `json:"round_ns"`
		}
		if err := dec.Decode(&r); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			_ = enc.Encode(hostileMessage{Error: err.Error()})
			return 1
		}
		st, _ := h.round(context.Background(), time.Duration(r.RoundNs))()
		if enc.Encode(hostileMessage{Statuses: st}) != nil {
			return 1
		}
	}
}
