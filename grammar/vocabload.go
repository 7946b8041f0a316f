package grammar

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/airs-dev/airs/internal/gzfile"
)

// eosNames are special tokens that end generation.
var eosNames = map[string]bool{
	"<|eot_id|>": true, "<|end_of_text|>": true, "<|im_end|>": true, "<|endoftext|>": true,
	"</s>": true, "<eos>": true, "<end_of_turn>": true, "<|end|>": true, "<|eom_id|>": true,
}

// LoadVocab loads a vocabulary from path, by content: our JSONL
// (.vocab.jsonl, optionally gzip), a Hugging Face tokenizer.json (optionally
// gzip) or a GGUF model file.
func LoadVocab(path string) (*Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return nil, fmt.Errorf("grammar: %s: %w", path, err)
	}
	name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(baseName(path), ".gz"), ".jsonl"), ".vocab")
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".tokenizer")
	if string(magic[:]) == "GGUF" {
		return ReadGGUFVocab(f, name)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r, err := gzfile.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	trim := bytes.TrimSpace(data)
	if bytes.HasPrefix(trim, []byte(`{"id"`)) || bytes.Contains(trim[:min(len(trim), 200)], []byte(`"bytes_b64"`)) {
		return ReadVocabJSONL(bytes.NewReader(data), name)
	}
	return ReadHFTokenizer(bytes.NewReader(data), name)
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// ReadVocabJSONL reads our format: one {"id","bytes_b64","special"} per line.
func ReadVocabJSONL(r io.Reader, name string) (*Vocab, error) {
	v := &Vocab{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec struct {
			ID      int    `json:"id"`
			B64     string `json:"bytes_b64"`
			Special bool   `json:"special"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("grammar: vocab line: %w", err)
		}
		b, err := base64.StdEncoding.DecodeString(rec.B64)
		if err != nil {
			return nil, fmt.Errorf("grammar: vocab id %d: %w", rec.ID, err)
		}
		if rec.ID < 0 || rec.ID > 1<<24 {
			return nil, fmt.Errorf("grammar: vocab id %d out of range", rec.ID)
		}
		v.set(rec.ID, b, rec.Special)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	v.finish()
	return v, nil
}

func (v *Vocab) set(id int, b []byte, special bool) {
	for len(v.Tokens) <= id {
		v.Tokens = append(v.Tokens, nil)
		v.Special = append(v.Special, false)
	}
	v.Tokens[id] = b
	v.Special[id] = special
}

func (v *Vocab) finish() {
	v.EOS = v.EOS[:0]
	for id, t := range v.Tokens {
		if v.Special[id] && eosNames[string(t)] {
			v.EOS = append(v.EOS, id)
		}
	}
	if v.Size < len(v.Tokens) {
		v.Size = len(v.Tokens)
	}
}

// gpt2ByteDecoder maps the GPT-2 byte-level alphabet back to bytes.
func gpt2ByteDecoder() map[rune]byte {
	m := map[rune]byte{}
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			m[rune(b)] = byte(b)
		} else {
			m[rune(256+n)] = byte(b)
			n++
		}
	}
	return m
}

// ReadHFTokenizer reads a Hugging Face tokenizer.json: byte-level BPE (GPT-2
// byte map) or SentencePiece-style ("▁" for space, <0xNN> byte fallback).
func ReadHFTokenizer(r io.Reader, name string) (*Vocab, error) {
	var tj struct {
		AddedTokens []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Type         string          `json:"type"`
			Vocab        json.RawMessage `json:"vocab"`
			ByteFallback bool            `json:"byte_fallback"`
		} `json:"model"`
		Decoder json.RawMessage `json:"decoder"`
	}
	if err := json.NewDecoder(r).Decode(&tj); err != nil {
		return nil, fmt.Errorf("grammar: tokenizer.json: %w", err)
	}
	vocab := map[string]int{}
	if len(tj.Model.Vocab) > 0 && tj.Model.Vocab[0] == '{' {
		if err := json.Unmarshal(tj.Model.Vocab, &vocab); err != nil {
			return nil, fmt.Errorf("grammar: tokenizer.json vocab: %w", err)
		}
	} else if len(tj.Model.Vocab) > 0 { // Unigram: [[piece, score], ...]
		var pieces [][2]any
		if err := json.Unmarshal(tj.Model.Vocab, &pieces); err != nil {
			return nil, fmt.Errorf("grammar: tokenizer.json vocab: %w", err)
		}
		for i, p := range pieces {
			s, _ := p[0].(string)
			vocab[s] = i
		}
	}
	byteLevel := bytes.Contains(tj.Decoder, []byte(`"ByteLevel"`))
	dec := gpt2ByteDecoder()
	v := &Vocab{Name: name}
	for piece, id := range vocab {
		var b []byte
		switch {
		case byteLevel:
			for _, r := range piece {
				c, ok := dec[r]
				if !ok {
					b = append(b, string(r)...)
					continue
				}
				b = append(b, c)
			}
		case len(piece) == 6 && strings.HasPrefix(piece, "<0x") && piece[5] == '>':
			var x byte
			if _, err := fmt.Sscanf(piece, "<0x%02X>", &x); err == nil {
				b = []byte{x}
			} else {
				b = []byte(piece)
			}
		default:
			b = []byte(strings.ReplaceAll(piece, "▁", " "))
		}
		v.set(id, b, false)
	}
	for _, at := range tj.AddedTokens {
		v.set(at.ID, []byte(at.Content), at.Special || true)
	}
	v.finish()
	return v, nil
}
