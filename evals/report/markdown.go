package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Table is a Markdown table. Header and every row should have the same
// number of cells; short rows are padded.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Figure is an image beside the report; Path is relative to the report's
// directory.
type Figure struct {
	Title string
	Path  string
}

// Section is a titled part of a report.
type Section struct {
	Title   string
	Text    string // Markdown, written as is
	Tables  []Table
	Figures []Figure
}

// Document is a whole report.
type Document struct {
	Title    string
	Intro    string // Markdown, e.g. the command that produced it
	Sections []Section
}

// escapeCell keeps a cell on one table line.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// Markdown renders the table.
func (t Table) Markdown() string {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "**%s**\n\n", t.Title)
	}
	n := len(t.Header)
	for _, r := range t.Rows {
		n = max(n, len(r))
	}
	if n == 0 {
		return b.String()
	}
	row := func(cells []string) {
		b.WriteString("|")
		for i := 0; i < n; i++ {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteString(" " + escapeCell(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for i := 0; i < n; i++ {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// Markdown renders the document.
func (d Document) Markdown() string {
	var b strings.Builder
	if d.Title != "" {
		fmt.Fprintf(&b, "# %s\n\n", d.Title)
	}
	if d.Intro != "" {
		b.WriteString(strings.TrimRight(d.Intro, "\n") + "\n\n")
	}
	for _, s := range d.Sections {
		if s.Title != "" {
			fmt.Fprintf(&b, "## %s\n\n", s.Title)
		}
		if s.Text != "" {
			b.WriteString(strings.TrimRight(s.Text, "\n") + "\n\n")
		}
		for _, t := range s.Tables {
			b.WriteString(t.Markdown() + "\n")
		}
		for _, f := range s.Figures {
			fmt.Fprintf(&b, "![%s](%s)\n\n", f.Title, filepath.ToSlash(f.Path))
		}
	}
	return b.String()
}

// Write writes the document to dir/name (creating dir) and returns the path.
func (d Document) Write(dir, name string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(d.Markdown()), 0o644); err != nil {
		return "", err
	}
	return p, nil
}

// Pct formats a fraction in 0..1 as a percentage with one decimal.
func Pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
