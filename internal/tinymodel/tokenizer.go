package tinymodel

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/airs-dev/airs/internal/gzfile"
)

// GGUF token types (llama.cpp's llama_token_type).
const (
	TokenNormal      int32 = 1
	TokenControl     int32 = 3
	TokenUserDefined int32 = 4
)

// Tokenizer is a byte-level BPE vocabulary in the form GGUF stores it
// (tokenizer.ggml.* keys).
type Tokenizer struct {
	Tokens []string // by id, dense 0..len-1
	Types  []int32  // GGUF token type per id
	Merges []string // "a b", in priority order
	// Pre is tokenizer.ggml.pre: the pre-tokenizer name llama.cpp and Ollama
	// know ("qwen2" for Qwen2/3, "llama-bpe" for Llama 3).
	Pre string
	BOS uint32
	EOS uint32
}

// hfTokenizer is the part of a Hugging Face tokenizer.json we read.
type hfTokenizer struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Model struct {
		Type   string            `json:"type"`
		Vocab  map[string]int    `json:"vocab"`
		Merges []json.RawMessage `json:"merges"`
	} `json:"model"`
}

// ReadTokenizerJSON reads a Hugging Face tokenizer.json holding a BPE model.
// Merges may be stored as "a b" strings or as ["a","b"] pairs. Added tokens
// marked special become control tokens, the others user-defined ones (as
// llama.cpp's converter does). BOS and EOS are chosen by name: <|endoftext|>
// and <|im_end|> (Qwen), or <|begin_of_text|> and <|eot_id|> (Llama 3); pre
// is the tokenizer.ggml.pre value to record.
func ReadTokenizerJSON(r io.Reader, pre string) (*Tokenizer, error) {
	var hf hfTokenizer
	if err := json.NewDecoder(r).Decode(&hf); err != nil {
		return nil, fmt.Errorf("tinymodel: decode tokenizer.json: %w", err)
	}
	if hf.Model.Type != "BPE" {
		return nil, fmt.Errorf("tinymodel: tokenizer model %q, want BPE", hf.Model.Type)
	}
	n := 0
	for _, id := range hf.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range hf.AddedTokens {
		n = max(n, a.ID+1)
	}
	t := &Tokenizer{Tokens: make([]string, n), Types: make([]int32, n), Pre: pre}
	seen := make([]bool, n)
	for tok, id := range hf.Model.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("tinymodel: negative token id %d", id)
		}
		t.Tokens[id], t.Types[id], seen[id] = tok, TokenNormal, true
	}
	for _, a := range hf.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("tinymodel: negative token id %d", a.ID)
		}
		typ := TokenUserDefined
		if a.Special {
			typ = TokenControl
		}
		t.Tokens[a.ID], t.Types[a.ID], seen[a.ID] = a.Content, typ, true
	}
	for id, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("tinymodel: token ids are not dense: %d missing", id)
		}
	}
	t.Merges = make([]string, 0, len(hf.Model.Merges))
	for i, raw := range hf.Model.Merges {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			t.Merges = append(t.Merges, s)
			continue
		}
		var pair []string
		if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("tinymodel: merge %d: want \"a b\" or [a, b], got %s", i, raw)
		}
		t.Merges = append(t.Merges, pair[0]+" "+pair[1])
	}
	var bosName, eosName string
	switch {
	case t.has("<|im_end|>"):
		bosName, eosName = "<|endoftext|>", "<|im_end|>"
	case t.has("<|eot_id|>"):
		bosName, eosName = "<|begin_of_text|>", "<|eot_id|>"
	default:
		return nil, fmt.Errorf("tinymodel: cannot tell BOS/EOS: neither <|im_end|> nor <|eot_id|> in vocabulary")
	}
	var ok bool
	if t.BOS, ok = t.id(bosName); !ok {
		return nil, fmt.Errorf("tinymodel: BOS token %s missing", bosName)
	}
	t.EOS, _ = t.id(eosName)
	return t, nil
}

// ReadTokenizerFile reads a tokenizer.json file, gunzipping it when its name
// ends in .gz.
func ReadTokenizerFile(path, pre string) (*Tokenizer, error) {
	r, err := gzfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tinymodel: %w", err)
	}
	defer r.Close()
	return ReadTokenizerJSON(r, pre)
}

func (t *Tokenizer) has(tok string) bool { _, ok := t.id(tok); return ok }

func (t *Tokenizer) id(tok string) (uint32, bool) {
	// Special tokens sit at the end of the vocabulary; scan from there.
	for i := len(t.Tokens) - 1; i >= 0; i-- {
		if t.Tokens[i] == tok {
			return uint32(i), true
		}
	}
	return 0, false
}
