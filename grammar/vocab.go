package grammar

// Vocab is a model's token vocabulary as raw bytes: Tokens[id] is exactly what
// token id decodes to (byte-level BPE already un-mapped, SentencePiece "▁"
// already a space, <0xNN> already the byte). Masks are sized to Size, which
// may exceed len(Tokens) when a model pads its logits.
type Vocab struct {
	Name    string
	Tokens  [][]byte
	Special []bool // Special[id]: control/added token, never allowed inside JSON
	EOS     []int  // ids that end generation (allowed only when output is complete)
	Size    int    // logits width; >= len(Tokens)
}
