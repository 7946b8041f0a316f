package inproc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/airs-dev/airs/selector"
)

// Template renders a conversation the way the model was trained to read
// it, ending with the assistant's turn open. AIRS does not run the GGUF's
// Jinja template: it recognises the family by its markers and renders that
// family's layout itself.
type Template struct {
	Name   string
	Render func([]selector.Message) string
}

// The families AIRS renders.
var (
	ChatML = Template{Name: "chatml", Render: ChatPrompt}
	Llama3 = Template{Name: "llama3", Render: llama3Prompt}
	Gemma  = Template{Name: "gemma", Render: gemmaPrompt}
	// Mistral is the [INST] layout of Mistral and Mixtral instruct models.
	Mistral = Template{Name: "mistral", Render: mistralPrompt}
)

// DetectTemplate picks the family of a GGUF's tokenizer.chat_template by
// its markers; one it does not recognise (or none) is ChatML, and notice
// says so.
func DetectTemplate(chatTemplate string) (t Template, notice string) {
	switch {
	case strings.Contains(chatTemplate, "<|im_start|>"):
		return ChatML, ""
	case strings.Contains(chatTemplate, "<|start_header_id|>"):
		return Llama3, ""
	case strings.Contains(chatTemplate, "<start_of_turn>"):
		return Gemma, ""
	case strings.Contains(chatTemplate, "[INST]"):
		return Mistral, ""
	case strings.TrimSpace(chatTemplate) == "":
		return ChatML, "the model has no chat template (tokenizer.chat_template): prompts use ChatML (<|im_start|>), which a model trained on another layout may follow poorly"
	}
	return ChatML, "the model's chat template is none AIRS recognises (ChatML, Llama 3, Gemma, Mistral): prompts use ChatML (<|im_start|>), which a model trained on another layout may follow poorly"
}

// Prompt renders msgs with the engine's template (ChatML until Open sets
// another).
func (e *Engine) Prompt(msgs []selector.Message) string {
	if e.tmpl.Render == nil {
		return ChatPrompt(msgs)
	}
	return e.tmpl.Render(msgs)
}

// Template is the engine's chat template and, when it fell back to ChatML,
// why.
func (e *Engine) Template() (Template, string) {
	if e.tmpl.Render == nil {
		return ChatML, e.tmplNotice
	}
	return e.tmpl, e.tmplNotice
}

// SetTemplate makes t the engine's chat template.
func (e *Engine) SetTemplate(t Template, notice string) { e.tmpl, e.tmplNotice = t, notice }

// llama3Prompt is Llama 3's layout. The BOS (<|begin_of_text|>) is left to
// the tokenizer, which adds it.
func llama3Prompt(msgs []selector.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|start_header_id|>%s<|end_header_id|>\n\n%s<|eot_id|>", m.Role, strings.TrimSpace(m.Content))
	}
	b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	return b.String()
}

// gemmaPrompt is Gemma's layout: roles user and model, no system role (the
// system text opens the first user turn, as Gemma's own template does).
func gemmaPrompt(msgs []selector.Message) string {
	var b strings.Builder
	system := ""
	for _, m := range msgs {
		switch m.Role {
		case "system":
			system += m.Content + "\n\n"
			continue
		case "assistant":
			fmt.Fprintf(&b, "<start_of_turn>model\n%s<end_of_turn>\n", strings.TrimSpace(m.Content))
		default:
			fmt.Fprintf(&b, "<start_of_turn>user\n%s<end_of_turn>\n", system+strings.TrimSpace(m.Content))
			system = ""
		}
	}
	if system != "" {
		fmt.Fprintf(&b, "<start_of_turn>user\n%s<end_of_turn>\n", strings.TrimSpace(system))
	}
	b.WriteString("<start_of_turn>model\n")
	return b.String()
}

// mistralPrompt is the [INST] layout; the system text opens the first
// user turn, as Mistral's template does.
func mistralPrompt(msgs []selector.Message) string {
	var b strings.Builder
	system := ""
	for _, m := range msgs {
		switch m.Role {
		case "system":
			system += m.Content + "\n\n"
		case "assistant":
			fmt.Fprintf(&b, " %s</s>", strings.TrimSpace(m.Content))
		default:
			fmt.Fprintf(&b, "[INST] %s [/INST]", system+strings.TrimSpace(m.Content))
			system = ""
		}
	}
	if system != "" {
		fmt.Fprintf(&b, "[INST] %s [/INST]", strings.TrimSpace(system))
	}
	return b.String()
}

// ReadChatTemplate returns a GGUF's tokenizer.chat_template ("" when it has
// none).
func ReadChatTemplate(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := &metaReader{r: bufio.NewReaderSize(f, 1<<20)}
	var magic [4]byte
	if _, err := io.ReadFull(r.r, magic[:]); err != nil || string(magic[:]) != "GGUF" {
		return "", fmt.Errorf("inproc: %s is not a GGUF model file", path)
	}
	if v := r.u32(); v < 2 {
		return "", fmt.Errorf("inproc: %s: GGUF version %d is not supported", path, v)
	}
	r.u64() // tensors
	n := r.u64()
	for i := uint64(0); i < n && r.err == nil; i++ {
		key := r.str(1 << 16)
		typ := r.u32()
		if key == "tokenizer.chat_template" && typ == ggufString {
			s := r.str(1 << 24)
			return s, r.failed(path)
		}
		r.skip(typ)
	}
	return "", r.failed(path)
}

const (
	ggufString = 8
	ggufArray  = 9
)

// metaReader reads GGUF metadata values, remembering the first error.
type metaReader struct {
	r   *bufio.Reader
	err error
	buf [8]byte
}

func (m *metaReader) failed(path string) error {
	if m.err != nil {
		return fmt.Errorf("inproc: reading the metadata of %s: %w", path, m.err)
	}
	return nil
}

func (m *metaReader) read(n int) []byte {
	if m.err != nil {
		return m.buf[:n]
	}
	if _, err := io.ReadFull(m.r, m.buf[:n]); err != nil {
		m.err = err
	}
	return m.buf[:n]
}

func (m *metaReader) u32() uint32 { return binary.LittleEndian.Uint32(m.read(4)) }
func (m *metaReader) u64() uint64 { return binary.LittleEndian.Uint64(m.read(8)) }

func (m *metaReader) str(limit uint64) string {
	n := m.u64()
	if m.err != nil {
		return ""
	}
	if n > limit {
		m.err = fmt.Errorf("a string of %d bytes", n)
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(m.r, b); err != nil {
		m.err = err
	}
	return string(b)
}

var errBadType = errors.New("an unknown metadata type")

func (m *metaReader) skip(typ uint32) {
	if m.err != nil {
		return
	}
	switch typ {
	case 0, 1, 7: // u8, i8, bool
		m.discard(1)
	case 2, 3:
		m.discard(2)
	case 4, 5, 6:
		m.discard(4)
	case 10, 11, 12:
		m.discard(8)
	case ggufString:
		m.discard(int64(m.u64()))
	case ggufArray:
		et, n := m.u32(), m.u64()
		for i := uint64(0); i < n && m.err == nil; i++ {
			m.skip(et)
		}
	default:
		m.err = fmt.Errorf("%w (%d)", errBadType, typ)
	}
}

func (m *metaReader) discard(n int64) {
	if m.err != nil {
		return
	}
	if n < 0 {
		m.err = errors.New("a negative length")
		return
	}
	if _, err := m.r.Discard(int(n)); err != nil {
		m.err = err
	}
}
