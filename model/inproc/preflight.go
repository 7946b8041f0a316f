package inproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/grammar"
)

// Options say what Open loads and how.
type Options struct {
	// ContextLen is the sequence's capacity in tokens (default 4096).
	ContextLen int
	// Threads for the forward pass of one token (default: half the
	// logical CPUs, leaving room for the mask goroutine that overlaps it).
	Threads int
	// BatchThreads for the forward pass of a prompt (a batch of 32 tokens
	// or more; default: every logical CPU: the mask is idle then, and the
	// prompt is most of a call's time).
	BatchThreads int
	// MemAvailable overrides the memory the size check allows (bytes; 0:
	// MemAvailable of /proc/meminfo, or no check where that is unknown).
	MemAvailable int64
	// NoPrefixReuse decodes every prompt whole, instead of keeping the
	// cached prefix it shares with the previous sequence (for comparison).
	NoPrefixReuse bool
}

// ErrNotBuilt is Open in a binary built without the inproc tag.
var ErrNotBuilt = errors.New("the in-process engine is not in this binary: build airs with `go build -tags inproc ./cmd/airs` " +
	"(cgo and a C/C++ compiler; llama.cpp's sources come with the github.com/ollama/ollama v0.17.4 module, " +
	"and need the headers of nlohmann-json3-dev and libstb-dev and miniaudio.h: `make inproc` does all of it)")

// Preflight checks a model file before anything is loaded: that it is a
// GGUF, that it fits in memory, and reads its vocabulary.
func Preflight(path string, opts Options) (*grammar.Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return nil, fmt.Errorf("inproc: %s is not a GGUF model file (it does not start with the GGUF magic)", path)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("inproc: %w", err)
	}
	avail := opts.MemAvailable
	if avail == 0 {
		avail = memAvailable()
	}
	if need := MemoryNeed(st.Size(), opts); avail > 0 && need > avail {
		return nil, fmt.Errorf("inproc: %s is too large for this machine's memory: loading it needs about %s (weights %s plus context and buffers), %s is available",
			path, human(need), human(st.Size()), human(avail))
	}
	v, err := grammar.ReadGGUFVocab(f, path)
	if err != nil {
		return nil, fmt.Errorf("inproc: reading the vocabulary of %s: %w", path, err)
	}
	return v, nil
}

// MemoryNeed estimates the resident memory of a model of fileSize bytes:
// the weights (loaded, not mapped) and a margin for the KV cache and
// compute buffers at opts.ContextLen (128 KiB a token: a Qwen3-0.6B's F16
// KV cache is 112 KiB a token). An estimate, not a promise.
func MemoryNeed(fileSize int64, opts Options) int64 {
	n := int64(opts.ContextLen)
	if n <= 0 {
		n = 4096
	}
	return fileSize + fileSize/10 + n*(128<<10) + 64<<20
}

// memAvailable reads MemAvailable from /proc/meminfo (0 when unknown).
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			fs := strings.Fields(rest)
			if len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func human(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
}
