package inproc

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/selector"
)

// Excerpts of the chat templates real GGUFs carry (tokenizer.chat_template),
// as Hugging Face ships them: the markers DetectTemplate goes by.
var realTemplates = map[string]string{
	// Qwen3 (and Qwen2.5): ChatML.
	"chatml": `{%- if tools %}
    {{- '<|im_start|>system\n' }}
{%- for message in messages %}{{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}`,
	// Llama 3.1 / 3.2 Instruct.
	"llama3": `{{- bos_token }}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- for message in messages %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}`,
	// Gemma 2 / 3 instruct.
	"gemma": `{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}`,
	// Mistral 7B Instruct v0.2/v0.3.
	"mistral": `{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% endif %}{% endfor %}`,
}

func TestDetectTemplate(t *testing.T) {
	for want, tmpl := range realTemplates {
		got, notice := DetectTemplate(tmpl)
		if got.Name != want || notice != "" {
			t.Errorf("%s template: detected %s (%q)", want, got.Name, notice)
		}
	}
	// Phi-3's layout is none of them: ChatML, saying so.
	phi3 := `{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}`
	for _, tmpl := range []string{phi3, ""} {
		got, notice := DetectTemplate(tmpl)
		if got.Name != "chatml" || !strings.Contains(notice, "prompts use ChatML") {
			t.Errorf("%.30q: %s, %q", tmpl, got.Name, notice)
		}
	}
}

func TestTemplateRender(t *testing.T) {
	msgs := []selector.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hi "}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "list files"}}
	for _, c := range []struct {
		t    Template
		want string
	}{
		{ChatML, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi <|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n<|im_start|>user\nlist files<|im_end|>\n<|im_start|>assistant\n"},
		{Llama3, "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nhello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nlist files<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{Gemma, "<start_of_turn>user\nBe brief.\n\nhi<end_of_turn>\n<start_of_turn>model\nhello<end_of_turn>\n<start_of_turn>user\nlist files<end_of_turn>\n<start_of_turn>model\n"},
		{Mistral, "[INST] Be brief.\n\nhi [/INST] hello</s>[INST] list files [/INST]"},
	} {
		if got := c.t.Render(msgs); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.t.Name, got, c.want)
		}
	}
	// A system message alone still opens a user turn.
	if got := Gemma.Render([]selector.Message{{Role: "system", Content: "x"}}); got != "<start_of_turn>user\nx<end_of_turn>\n<start_of_turn>model\n" {
		t.Errorf("gemma, system only: %q", got)
	}
}

// writeMetaGGUF writes a GGUF header with metadata of most value types (a
// string array the size of a small vocabulary among them) and, when tmpl
// is not "", tokenizer.chat_template last.
func writeMetaGGUF(t *testing.T, tmpl string) string {
	var b []byte
	u32 := func(x uint32) { b = binary.LittleEndian.AppendUint32(b, x) }
	u64 := func(x uint64) { b = binary.LittleEndian.AppendUint64(b, x) }
	str := func(s string) { u64(uint64(len(s))); b = append(b, s...) }
	n := uint64(5)
	if tmpl != "" {
		n++
	}
	b = append(b, "GGUF"...)
	u32(3)
	u64(0)
	u64(n)
	str("general.architecture")
	u32(8)
	str("qwen3")
	str("qwen3.block_count")
	u32(4)
	u32(28)
	str("qwen3.rope.freq_base")
	u32(6)
	u32(0x49742400)
	str("tokenizer.ggml.add_bos_token")
	u32(7)
	b = append(b, 0)
	str("tokenizer.ggml.tokens")
	u32(9)
	u32(8)
	u64(3000)
	for i := 0; i < 3000; i++ {
		str(strings.Repeat("t", i%7+1))
	}
	if tmpl != "" {
		str("tokenizer.chat_template")
		u32(8)
		str(tmpl)
	}
	p := filepath.Join(t.TempDir(), "m.gguf")
	os.WriteFile(p, b, 0o644)
	return p
}

func TestReadChatTemplate(t *testing.T) {
	p := writeMetaGGUF(t, realTemplates["llama3"])
	got, err := ReadChatTemplate(p)
	if err != nil || got != realTemplates["llama3"] {
		t.Fatalf("%q, %v", got, err)
	}
	if got, err := ReadChatTemplate(writeMetaGGUF(t, "")); err != nil || got != "" {
		t.Fatalf("no template: %q, %v", got, err)
	}
	raw, _ := os.ReadFile(p)
	cut := filepath.Join(t.TempDir(), "cut.gguf")
	os.WriteFile(cut, raw[:len(raw)-40], 0o644)
	if _, err := ReadChatTemplate(cut); err == nil || !strings.Contains(err.Error(), "reading the metadata of") {
		t.Fatalf("a cut file: %v", err)
	}
}

// promptBackend records the prompts the engine tokenizes.
type promptBackend struct {
	*scriptedBackend
	prompts []string
}

func (p *promptBackend) Tokenize(text string, special bool) ([]int, error) {
	if special {
		p.prompts = append(p.prompts, text)
	}
	return p.scriptedBackend.Tokenize(text, special)
}

// The engine's template is what the chat client and the selector's model
// render with.
func TestEngineTemplateUsed(t *testing.T) {
	c, sb := scriptedClient(t, "ok")
	pb := &promptBackend{scriptedBackend: sb}
	e, err := New(pb, sb.v)
	if err != nil {
		t.Fatal(err)
	}
	e.SetTemplate(DetectTemplate(realTemplates["gemma"]))
	c.Engine = e
	if err := c.Generate(context.Background(), hi(greedy()), nil); err != nil {
		t.Fatal(err)
	}
	m := &Model{Engine: e}
	m.Generate(context.Background(), selector.ModelRequest{Messages: []selector.Message{{Role: "user", Content: "hi"}}, Format: []byte(`{"type":"object","properties":{"a":{"enum":[1]}},"required":["a"]}`)}, nil)
	want := "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n"
	if len(pb.prompts) != 2 || pb.prompts[0] != want || pb.prompts[1] != want {
		t.Fatalf("prompts %q, want twice %q", pb.prompts, want)
	}
	if tm, notice := e.Template(); tm.Name != "gemma" || notice != "" {
		t.Fatalf("Template() %s %q", tm.Name, notice)
	}
}
