package grammar

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func TestReadHFTokenizerByteLevel(t *testing.T) {
	// GPT-2 byte-level: "Ġ" is a space, "Ċ" a newline
	tj := `{"added_tokens":[{"id":4,"content":"<|endoftext|>","special":true}],
	"model":{"type":"BPE","vocab":{"a":0,"Ġb":1,"Ċ":2,"\"":3}},"decoder":{"type":"ByteLevel"}}`
	v, err := ReadHFTokenizer(bytes.NewReader([]byte(tj)), "t")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", " b", "\n", `"`, "<|endoftext|>"}
	for i, w := range want {
		if string(v.Tokens[i]) != w {
			t.Errorf("token %d = %q, want %q", i, v.Tokens[i], w)
		}
	}
	if !v.Special[4] || len(v.EOS) != 1 || v.EOS[0] != 4 {
		t.Errorf("special/EOS: %v %v", v.Special, v.EOS)
	}
}

func TestReadHFTokenizerSentencePiece(t *testing.T) {
	tj := `{"added_tokens":[{"id":0,"content":"<eos>","special":true}],
	"model":{"type":"BPE","byte_fallback":true,"vocab":{"<eos>":0,"▁hi":1,"<0x0A>":2,"<0xE2>":3}},
	"decoder":{"type":"Sequence","decoders":[{"type":"Replace"},{"type":"ByteFallback"}]}}`
	v, err := ReadHFTokenizer(bytes.NewReader([]byte(tj)), "t")
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Tokens[1]) != " hi" || !bytes.Equal(v.Tokens[2], []byte{'\n'}) || !bytes.Equal(v.Tokens[3], []byte{0xE2}) {
		t.Errorf("tokens %q", v.Tokens)
	}
}

// writeGGUF writes a minimal GGUF v3 file with a tokenizer.
func writeGGUF(t *testing.T, path string, model string, tokens []string, types []int32, eos uint32) {
	var b bytes.Buffer
	w := func(x any) { binary.Write(&b, binary.LittleEndian, x) }
	str := func(s string) { w(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	w(uint32(3))
	w(uint64(0)) // tensors
	w(uint64(5)) // kv
	str("general.name")
	w(uint32(8))
	str("tiny")
	str("tokenizer.ggml.model")
	w(uint32(8))
	str(model)
	str("tokenizer.ggml.tokens")
	w(uint32(9))
	w(uint32(8))
	w(uint64(len(tokens)))
	for _, s := range tokens {
		str(s)
	}
	str("tokenizer.ggml.token_type")
	w(uint32(9))
	w(uint32(5))
	w(uint64(len(types)))
	for _, x := range types {
		w(x)
	}
	str("tokenizer.ggml.eos_token_id")
	w(uint32(4))
	w(eos)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadGGUFVocab(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.gguf")
	writeGGUF(t, p, "gpt2", []string{"<s>", "Ġworld", "{\"", "<0x0A>"}, []int32{3, 1, 1, 6}, 0)
	v, err := LoadVocab(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Tokens[1]) != " world" || string(v.Tokens[2]) != `{"` || !bytes.Equal(v.Tokens[3], []byte{'\n'}) {
		t.Errorf("tokens %q", v.Tokens)
	}
	if !v.Special[0] || v.Special[1] || len(v.EOS) != 1 || v.EOS[0] != 0 {
		t.Errorf("special %v eos %v", v.Special, v.EOS)
	}
	p2 := filepath.Join(dir, "sp.gguf")
	writeGGUF(t, p2, "llama", []string{"</s>", "▁hi", "<0x22>"}, []int32{3, 1, 6}, 0)
	v2, err := LoadVocab(p2)
	if err != nil {
		t.Fatal(err)
	}
	if string(v2.Tokens[1]) != " hi" || string(v2.Tokens[2]) != `"` {
		t.Errorf("sentencepiece tokens %q", v2.Tokens)
	}
	if _, err := ReadGGUFVocab(bytes.NewReader([]byte("GGUF\x03\x00\x00\x00")), "x"); err == nil {
		t.Error("truncated GGUF accepted")
	}
}
