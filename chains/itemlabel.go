package chains

import (
	"context"
	"strings"
)

type itemLabelKey struct{}

// ItemLabel names the foreach element a call of a chain was made for
// ("papers/bm25.pdf"), or "" for a call of a plain step or an element with
// nothing to name it by. The executor's Call gets it in its context, so
// that a channel can say which result is whose.
func ItemLabel(ctx context.Context) string {
	s, _ := ctx.Value(itemLabelKey{}).(string)
	return s
}

// itemLabelFields are the fields that name an element, in the order
// tried: what a tool's output calls the file, page or thing it is about.
var itemLabelFields = []string{"path", "file", "name", "title", "url", "id"}

// labelOf is what names item: a short string itself, or the first of an
// object's naming fields that is a short string.
func labelOf(item any) string {
	short := func(s string) string {
		s = strings.TrimSpace(s)
		if s == "" || len(s) > 120 || strings.ContainsAny(s, "\n\r") {
			return ""
		}
		return s
	}
	switch v := item.(type) {
	case string:
		return short(v)
	case map[string]any:
		for _, f := range itemLabelFields {
			if s, ok := v[f].(string); ok {
				if l := short(s); l != "" {
					return l
				}
			}
		}
	}
	return ""
}
