package grammar

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// A small GGUF header reader: just enough of the key/value section to get
// the tokenizer (tokenizer.ggml.*). Tensor data is never read.

type ggufReader struct {
	r   *bufio.Reader
	err error
}

func (g *ggufReader) u32() uint32 {
	var b [4]byte
	if _, err := io.ReadFull(g.r, b[:]); err != nil {
		panic(err)
	}
	return binary.LittleEndian.Uint32(b[:])
}

func (g *ggufReader) u64() uint64 {
	var b [8]byte
	if _, err := io.ReadFull(g.r, b[:]); err != nil {
		panic(err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

func (g *ggufReader) str() string {
	n := g.u64()
	if n > 1<<26 {
		panic(fmt.Errorf("string too long (%d)", n))
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(g.r, b); err != nil {
		panic(err)
	}
	return string(b)
}

var ggufSize = map[uint32]int{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

// value reads one value of type t; keep says whether to return it.
func (g *ggufReader) value(t uint32, keep bool) any {
	switch t {
	case 8:
		return g.str()
	case 9:
		et := g.u32()
		n := g.u64()
		if n > 1<<26 {
			panic(fmt.Errorf("array too long (%d)", n))
		}
		if !keep {
			if sz, ok := ggufSize[et]; ok {
				if _, err := g.r.Discard(int(n) * sz); err != nil {
					panic(err)
				}
				return nil
			}
			for i := uint64(0); i < n; i++ {
				g.value(et, false)
			}
			return nil
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(et, true)
		}
		return out
	}
	sz, ok := ggufSize[t]
	if !ok {
		panic(fmt.Errorf("unknown GGUF value type %d", t))
	}
	var b [8]byte
	if _, err := io.ReadFull(g.r, b[:sz]); err != nil {
		panic(err)
	}
	switch sz {
	case 1:
		return int64(b[0])
	case 2:
		return int64(binary.LittleEndian.Uint16(b[:]))
	case 4:
		if t == 5 {
			return int64(int32(binary.LittleEndian.Uint32(b[:])))
		}
		return int64(binary.LittleEndian.Uint32(b[:]))
	default:
		return int64(binary.LittleEndian.Uint64(b[:]))
	}
}

// ReadGGUFVocab reads tokenizer.ggml.tokens and tokenizer.ggml.token_type
// (and the EOS/EOT ids) from a GGUF file.
func ReadGGUFVocab(r io.ReaderAt, name string) (v *Vocab, err error) {
	g := &ggufReader{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, 1<<62), 1<<20)}
	defer func() {
		if x := recover(); x != nil {
			e, ok := x.(error)
			if !ok {
				panic(x)
			}
			v, err = nil, fmt.Errorf("grammar: GGUF: %w", e)
		}
	}()
	var magic [4]byte
	if _, err := io.ReadFull(g.r, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return nil, fmt.Errorf("grammar: not a GGUF file")
	}
	ver := g.u32()
	if ver < 2 {
		return nil, fmt.Errorf("grammar: GGUF version %d is not supported", ver)
	}
	g.u64() // tensors
	nkv := g.u64()
	var tokens, types []any
	model := ""
	var eos []int
	for i := uint64(0); i < nkv; i++ {
		key := g.str()
		t := g.u32()
		keep := strings.HasPrefix(key, "tokenizer.ggml.")
		val := g.value(t, keep)
		switch key {
		case "tokenizer.ggml.tokens":
			tokens, _ = val.([]any)
		case "tokenizer.ggml.token_type":
			types, _ = val.([]any)
		case "tokenizer.ggml.model":
			model, _ = val.(string)
		case "tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id":
			if x, ok := val.(int64); ok {
				eos = append(eos, int(x))
			}
		}
	}
	if tokens == nil {
		return nil, fmt.Errorf("grammar: GGUF has no tokenizer.ggml.tokens")
	}
	dec := gpt2ByteDecoder()
	v = &Vocab{Name: name}
	for id, x := range tokens {
		s, _ := x.(string)
		tt := int64(1)
		if id < len(types) {
			tt, _ = types[id].(int64)
		}
		var b []byte
		switch {
		case tt == 6 && len(s) == 6 && strings.HasPrefix(s, "<0x"):
			var c byte
			fmt.Sscanf(s, "<0x%02X>", &c)
			b = []byte{c}
		case tt != 1:
			b = []byte(s)
		case model == "gpt2":
			for _, r := range s {
				if c, ok := dec[r]; ok {
					b = append(b, c)
				} else {
					b = append(b, string(r)...)
				}
			}
		default:
			b = []byte(strings.ReplaceAll(s, "▁", " "))
		}
		v.set(id, b, tt != 1 && tt != 6)
	}
	v.finish()
	for _, e := range eos {
		if e >= 0 && e < len(v.Tokens) && !containsInt(v.EOS, e) {
			v.EOS = append(v.EOS, e)
		}
	}
	return v, nil
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
