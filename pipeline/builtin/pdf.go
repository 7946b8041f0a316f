package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/airs-dev/airs/pipeline"
)

const (
	pdfMaxFile         = 64 << 20
	pdfDefaultMaxChars = 200_000
	pdfMaxMaxChars     = 2_000_000
)

func pdfExtractTool(names []string) pipeline.Tool {
	return pipeline.Tool{
		Name:               "pdf-extract",
		Version:            "1.0.0",
		CapabilityRequired: readSpaceOfCall,
		Description: "Extract the text of a PDF document in a space (a directory the user has shared, such as documents): " +
			"papers, reports, invoices, price lists, contracts. Returns the text of the pages (all, or first_page..last_page) " +
			"and the page count, cut at max_chars with truncated=true. Scanned PDFs without a text layer give empty text.",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"space": ` + spaceProperty(names) + `,
				"path": {"type": "string", "minLength": 1, "maxLength": 4096,
					"description": "PDF path inside the space, relative (no .. and no leading /), e.g. papers/attention.pdf."},
				"first_page": {"type": "integer", "minimum": 1, "description": "First page to extract (1-based). Default: 1."},
				"last_page": {"type": "integer", "minimum": 1, "description": "Last page to extract. Default: the last page."},
				"max_chars": {"type": "integer", "minimum": 1, "maximum": 2000000, "default": 200000,
					"description": "Return at most this many characters of text."}
			},
			"required": ["space", "path"],
			"additionalProperties": false
		}`),
		ReturnSchema: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"space": {"type": "string"},
				"path": {"type": "string"},
				"num_pages": {"type": "integer", "minimum": 0},
				"first_page": {"type": "integer", "minimum": 0},
				"last_page": {"type": "integer", "minimum": 0},
				"text": {"type": "string"},
				"truncated": {"type": "boolean"}
			},
			"required": ["space", "path", "num_pages", "first_page", "last_page", "text", "truncated"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Slow,
		Idempotent:   true,
		ReadOnly:     true,
	}
}

type pdfParams struct {
	Space     string `json:"space"`
	Path      string `json:"path"`
	FirstPage int    `json:"first_page"`
	LastPage  int    `json:"last_page"`
	MaxChars  int    `json:"max_chars"`
}

type pdfResult struct {
	Space     string `json:"space"`
	Path      string `json:"path"`
	NumPages  int    `json:"num_pages"`
	FirstPage int    `json:"first_page"`
	LastPage  int    `json:"last_page"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

func (s *spaces) pdfExtract(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
	p := pdfParams{MaxChars: pdfDefaultMaxChars}
	if err := decodeParams(ctx, params, &p); err != nil {
		return nil, err
	}
	if p.MaxChars < 1 || p.MaxChars > pdfMaxMaxChars {
		return nil, reject(CodeBadParams, "max_chars must be between 1 and %d", pdfMaxMaxChars)
	}
	if p.FirstPage < 0 || p.LastPage < 0 || p.LastPage > 0 && p.FirstPage > p.LastPage {
		return nil, reject(CodeBadParams, "page range %d..%d is empty", p.FirstPage, p.LastPage)
	}
	f, st, rel, err := s.openFile(p.Space, p.Path, call)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > pdfMaxFile {
		return nil, reject(CodeTooLarge, "%q is %d bytes; pdf-extract reads PDFs up to %d bytes", rel, st.Size(), pdfMaxFile)
	}
	out := pdfResult{Space: p.Space, Path: rel}
	ctx, done := heavy(ctx, int(st.Size()))
	defer done()
	text, err := extractPDF(ctx, f, st.Size(), p, &out)
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled between pages: deliver the pages done so far.
			out.Text, out.Truncated = text, true
			b, _ := result(out)
			return b, ctx.Err()
		}
		return nil, reject(CodeBadPDF, "%q in space %q: %v", rel, p.Space, err)
	}
	out.Text, out.Truncated = truncateRunes(text, p.MaxChars)
	return result(out)
}

// extractPDF reads the text of pages p.FirstPage..p.LastPage. The PDF
// library panics on some malformed files; that is turned into an error here
// rather than left to the pipeline's crash guard, since a broken PDF is the
// caller's input problem, not a provider crash.
func extractPDF(ctx context.Context, f interface {
	ReadAt([]byte, int64) (int, error)
}, size int64, p pdfParams, out *pdfResult) (text string, err error) {
	var sb strings.Builder
	defer func() {
		if r := recover(); r != nil {
			text, err = cleanPDFText(sb.String()), fmt.Errorf("not a readable PDF (%v)", r)
			if cerr := ctx.Err(); cerr != nil {
				err = cerr // the library panicked on ctxReaderAt's error
			}
		}
	}()
	// The library takes no context, but it reads the file through f as it
	// parses (the cross-reference table, then each content stream in small
	// chunks): a reader that fails once ctx has ended stops it mid-page too,
	// where the check between pages below would come too late for a huge
	// (or decompression-bomb) page.
	r, err := pdf.NewReader(ctxReaderAt{ctx, f}, size)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return "", cerr
		}
		if strings.Contains(err.Error(), "encrypted") || strings.Contains(err.Error(), "password") {
			return "", fmt.Errorf("the PDF is encrypted")
		}
		return "", fmt.Errorf("not a readable PDF (%v)", err)
	}
	n := r.NumPage()
	out.NumPages = n
	first, last := max(p.FirstPage, 1), p.LastPage
	if last == 0 || last > n {
		last = n
	}
	if n == 0 || first > n {
		out.FirstPage, out.LastPage = 0, 0
		if p.FirstPage > n {
			return "", fmt.Errorf("first_page %d is past the last page (%d)", p.FirstPage, n)
		}
		return "", nil
	}
	out.FirstPage, out.LastPage = first, last
	for i := first; i <= last; i++ {
		if err := ctx.Err(); err != nil {
			return cleanPDFText(sb.String()), err
		}
		page := r.Page(i)
		if page.V.IsNull() {
			continue
		}
		// Font resource names (/F1) are per page, so fonts are not shared
		// across pages (the library's own GetPlainText does share them).
		t, err := page.GetPlainText(pageFonts(page))
		if cerr := ctx.Err(); cerr != nil {
			return cleanPDFText(sb.String()), cerr // the page was cut short: leave it out
		}
		if err != nil {
			return cleanPDFText(sb.String()), fmt.Errorf("page %d: %v", i, err)
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(t)
		if sb.Len() > 4*p.MaxChars+1024 {
			break // enough to fill max_chars; the rest would be cut anyway
		}
	}
	return cleanPDFText(sb.String()), nil
}

func pageFonts(page pdf.Page) map[string]*pdf.Font {
	m := make(map[string]*pdf.Font)
	for _, name := range page.Fonts() {
		f := page.Font(name)
		m[name] = &f
	}
	return m
}

// cleanPDFText tidies the library's output: it starts every text object on
// a new line, which leaves runs of blank lines and trailing spaces.
func cleanPDFText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank++
			continue
		}
		if len(out) > 0 && blank > 1 {
			out = append(out, "")
		}
		blank = 0
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}

// ctxReaderAt fails every read once its context has ended.
type ctxReaderAt struct {
	ctx context.Context
	r   interface {
		ReadAt([]byte, int64) (int, error)
	}
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := stopped(c.ctx); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}
