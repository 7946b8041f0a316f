package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompts: a server's prompts are text for a person's turn (`airs chat`'s
// /prompt), not tools: prompts/get's messages, joined, become what the
// user typed, and that turn takes the pipeline like any other.

// Prompt is one prompt a server offers.
type Prompt struct {
	Name        string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// maxPrompts bounds one prompts/list, as max_tools bounds tools/list.
const maxPrompts = 1000

// Prompts lists the server's prompts (none when it declares no prompts).
func (c *Conn) Prompts(ctx context.Context) ([]Prompt, error) {
	l, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	if r := l.sess.InitializeResult(); r == nil || r.Capabilities == nil || r.Capabilities.Prompts == nil {
		return nil, nil
	}
	var out []Prompt
	for p, err := range l.sess.Prompts(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp server %s: listing prompts: %v", c.srv.Name, err)
		}
		if len(out) == maxPrompts {
			return nil, fmt.Errorf("mcp server %s lists more than %d prompts", c.srv.Name, maxPrompts)
		}
		q := Prompt{Name: p.Name, Description: p.Description}
		for _, a := range p.Arguments {
			q.Arguments = append(q.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out = append(out, q)
	}
	return out, nil
}

// GetPrompt is prompt name with args, as the text of a user's turn: the
// messages' text in order, separated by blank lines. Content that is not
// text is an error (a chat turn is text), and so is a result over
// max_response_bytes.
func (c *Conn) GetPrompt(ctx context.Context, name string, args map[string]string) (string, error) {
	l, err := c.get(ctx)
	if err != nil {
		return "", err
	}
	if c.srv.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.srv.Timeout)
		defer cancel()
	}
	res, err := l.sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return "", fmt.Errorf("mcp server %s: prompt %s: %s (code %d)", c.srv.Name, name, we.Message, we.Code)
		}
		return "", fmt.Errorf("mcp server %s: prompt %s: %v", c.srv.Name, name, err)
	}
	var parts []string
	size := 0
	for i, m := range res.Messages {
		t, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return "", fmt.Errorf("mcp server %s: prompt %s: message %d is %T, not text: a chat turn is text only", c.srv.Name, name, i, m.Content)
		}
		size += len(t.Text)
		if max := c.srv.maxResponse(); size > max {
			return "", fmt.Errorf("mcp server %s: prompt %s is over max_response_bytes (%d)", c.srv.Name, name, max)
		}
		parts = append(parts, t.Text)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("mcp server %s: prompt %s has no messages", c.srv.Name, name)
	}
	return strings.Join(parts, "\n\n"), nil
}
