package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A port in use (a real one, held by this test) and a malformed address
// are one clear error, and "serving on" is never printed for them.
func TestServeListenErrors(t *testing.T) {
	e := newEnv(t, "")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for addr, want := range map[string]string{
		busy.Addr().String(): "the port is already in use",
		"localhost":          "missing port in address; want HOST:PORT",
	} {
		r := e.run("serve", "--model", "none", "--listen", addr)
		if r.code == 0 || strings.Contains(r.stderr, "serving on") {
			t.Errorf("%s: exit %d, stderr:\n%s", addr, r.code, r.stderr)
		}
		if strings.Count(r.stderr, "cannot listen on "+addr+": ") != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: want one %q error, stderr:\n%s", addr, want, r.stderr)
		}
	}
}

// "serving on" names the bound address (port 0 resolved), and the server
// answers as soon as it is printed.
func TestServeSaysWhereOnceBound(t *testing.T) {
	e := newEnv(t, "")
	cmd := exec.Command(airsBin, "--config", e.config, "serve", "--model", "none", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("airs serve exited before saying where it serves")
			}
			_, rest, found := strings.Cut(line, "serving on http://")
			if !found {
				continue
			}
			addr, _, _ := strings.Cut(rest, " ")
			if strings.HasSuffix(addr, ":0") {
				t.Fatalf("serving on an unbound address: %s", line)
			}
			resp, err := http.Get("http://" + addr + "/healthz")
			if err != nil {
				t.Fatalf("%q printed, but: %v", line, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("healthz: %d", resp.StatusCode)
			}
			go func() {
				for range lines {
				}
			}()
			return
		case <-deadline:
			t.Fatal("no 'serving on' line within 60 s")
		}
	}
}
