package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// process is one run of a stdio server. Its three streams are plain pipes
// AIRS owns (no exec copying goroutines), so that Wait returns when the
// process exits even if a child it left behind still holds a stream.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *lineLimit
	stderr *tail
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's answer, once exited
	// stderrDone is closed once the server's stderr reached its end (a
	// child it left behind may hold it open longer than it lives).
	stderrDone chan struct{}
}

// ServerEnv is the environment a stdio server starts with: the few
// variables of AIRS's own environment that a program needs to run at all
// (InheritedEnv, as the official MCP SDKs choose them), then extra. An
// outside server is not AIRS: the secrets AIRS was started with (a
// database password, another server's header token) are not its to read;
// what it needs, its configuration names (env:, pass_env:).
func ServerEnv(extra []string) []string {
	env := make([]string, 0, len(InheritedEnv)+len(extra))
	for _, k := range InheritedEnv {
		// A value starting "()" is a shell function exported by bash, which
		// the SDKs leave out too: it is code, not a setting.
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// startProcess starts argv with the server's environment (ServerEnv of
// env) and working directory.
func startProcess(argv, env []string, dir string, maxLine int) (*process, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err == nil { // a command not found is said by Start, as without a supervisor
		if s := supervisedCommand(cmd.Path, argv); s != nil {
			cmd = s
		}
	}
	cmd.Env = ServerEnv(env)
	cmd.Dir = dir
	ownGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = startCmd(cmd)
	// The child has its copies; the parent keeps only its own ends.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	exited := make(chan struct{})
	p := &process{cmd: cmd, stdin: inW, stdout: &lineLimit{r: outR, max: maxLine, exited: exited}, stderr: &tail{max: 4 << 10}, exited: exited,
		stderrDone: make(chan struct{})}
	go func() {
		io.Copy(p.stderr, errR)
		errR.Close()
		close(p.stderrDone)
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// hasExited reports whether the process exited, waiting up to d for it:
// the end of its stdout can arrive a moment before its exit is reaped.
func (p *process) hasExited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitText says how the process ended, with the end of its stderr: what
// it wrote last may still be in the pipe when its exit is reaped, so that
// is read first (for a moment at most: a child may hold the pipe open).
func (p *process) exitText() string {
	t := time.NewTimer(200 * time.Millisecond)
	select {
	case <-p.stderrDone:
	case <-t.C:
	}
	t.Stop()
	s := "exited"
	if p.err != nil {
		s = p.err.Error()
	}
	if t := p.stderr.String(); t != "" {
		s += "; its last stderr: " + t
	}
	return s
}

// stop ends the process as the MCP spec says for stdio: stdin is closed
// (done by the session's Close before this), then SIGTERM after grace,
// then SIGKILL after grace again.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	if p.hasExited(grace) {
		return
	}
	_ = signalGroup(p.cmd, sigTerm)
	if p.hasExited(grace) {
		return
	}
	p.kill()
}

// kill ends the process group at once and waits for the exit.
func (p *process) kill() {
	_ = signalGroup(p.cmd, sigKill)
	p.stdin.Close()
	p.stdout.Close()
	<-p.exited
}

// errMessageTooLarge ends the read side of a connection whose peer sent a
// line longer than the bound.
var errMessageTooLarge = errors.New("mcp: message over max_message_bytes")

// lineLimit bounds the bytes of one newline-delimited message read from a
// server (the go-sdk's stdio framing, and an HTTP body's lines). Past the
// bound, reads fail and tripped is set, so the call that was waiting can
// say why the connection ended.
type lineLimit struct {
	r       io.ReadCloser
	max     int
	n       int // bytes of the current line so far
	tripped atomic.Bool
	// eof: the peer closed its end (it exited, or closed stdout). A read
	// side that ended without it ended on AIRS's side: a message that did
	// not decode.
	eof atomic.Bool
	// deadFirst: the process had exited when the read side was first
	// closed (AIRS closing it after the exit, before the EOF was read).
	exited    <-chan struct{}
	closeOnce sync.Once
	deadFirst atomic.Bool
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.tripped.Load() {
		return 0, errMessageTooLarge
	}
	n, err := l.r.Read(p)
	if err == io.EOF {
		l.eof.Store(true)
	}
	if l.max <= 0 {
		return n, err
	}
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.n += len(b)
			break
		}
		if l.n+i > l.max {
			l.n += i
			break
		}
		l.n = 0
		b = b[i+1:]
	}
	if l.n > l.max {
		l.tripped.Store(true)
		return 0, errMessageTooLarge
	}
	return n, err
}

func (l *lineLimit) Close() error {
	l.closeOnce.Do(func() {
		if l.exited != nil {
			select {
			case <-l.exited:
				l.deadFirst.Store(true)
			default:
			}
		}
	})
	return l.r.Close()
}

// peerEnded reports whether the read side ended because the server did
// (it closed its stdout or exited), not because AIRS closed it after a
// message that did not decode.
func (l *lineLimit) peerEnded() bool { return l.eof.Load() || l.deadFirst.Load() }

// tail keeps the last max bytes written to it (a server's stderr, for the
// message that says why it died).
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}

func (p *process) String() string { return fmt.Sprintf("pid %d", p.cmd.Process.Pid) }
