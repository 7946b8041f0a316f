package grammar

import "io"

// LoadVocab loads a vocabulary from path, by content: our JSONL
// (.vocab.jsonl, optionally gzip), a Hugging Face tokenizer.json (optionally
// gzip) or a GGUF model file.
func LoadVocab(path string) (*Vocab, error) { panic("todo") }

// ReadVocabJSONL reads our format: one {"id","bytes_b64","special"} per line.
func ReadVocabJSONL(r io.Reader, name string) (*Vocab, error) { panic("todo") }

// ReadHFTokenizer reads a Hugging Face tokenizer.json: byte-level BPE (GPT-2
// byte map) or SentencePiece-style ("▁" for space, <0xNN> byte fallback).
func ReadHFTokenizer(r io.Reader, name string) (*Vocab, error) { panic("todo") }

// ReadGGUFVocab reads tokenizer.ggml.tokens and tokenizer.ggml.token_type
// (and the EOS/EOT ids) from a GGUF file.
func ReadGGUFVocab(r io.ReaderAt, name string) (*Vocab, error) { panic("todo") }
