package builtin

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
)

// minimalPDF writes a valid uncompressed PDF 1.4 by hand: one page per
// entry of pages, each line of a page drawn with Tj in Helvetica, and a
// correct cross-reference table. It is the smallest real PDF, and keeps the
// test independent of any PDF writer's quirks.
func minimalPDF(pages [][]string) []byte {
	var objs []string
	// 1: catalog, 2: pages, 3: font, then per page: page object, content.
	n := len(pages)
	kids := make([]string, n)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objs = append(objs,
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	)
	for i, lines := range pages {
		var content bytes.Buffer
		content.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
		for _, l := range lines {
			esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
			fmt.Fprintf(&content, "(%s) Tj T*\n", esc)
		}
		content.WriteString("ET")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
		)
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// fpdfDoc writes a PDF with fpdf (compressed streams, as real writers make).
func fpdfDoc(t *testing.T, pages [][]string) []byte {
	t.Helper()
	doc := fpdf.New("P", "mm", "A4", "")
	for _, lines := range pages {
		doc.AddPage()
		doc.SetFont("Helvetica", "", 12)
		for _, l := range lines {
			doc.CellFormat(0, 8, l, "", 1, "L", false, 0, "")
		}
	}
	var buf bytes.Buffer
	if err := doc.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPDFExtract(t *testing.T) {
	dir := t.TempDir()
	pricingA := [][]string{
		{"Acme Cloud - Price list 2024", "Basic plan: $10 per month", "Pro plan: $25 per month"},
		{"Enterprise plan: $1,200 per year", "Support: included"},
	}
	writeFile(t, filepath.Join(dir, "minimal.pdf"), minimalPDF(pricingA))
	writeFile(t, filepath.Join(dir, "fpdf.pdf"), fpdfDoc(t, pricingA))
	writeFile(t, filepath.Join(dir, "broken.pdf"), []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer garbage\n"))
	writeFile(t, filepath.Join(dir, "empty.pdf"), nil)
	mp := minimalPDF(pricingA)
	writeFile(t, filepath.Join(dir, "truncated.pdf"), mp[:len(mp)/2])
	writeFile(t, filepath.Join(dir, "text.pdf"), []byte("just text, no PDF here"))
	tools := testTools(t, map[string]string{"documents": dir})
	pe := tools["pdf-extract"]

	for _, file := range []string{"minimal.pdf", "fpdf.pdf"} {
		out, err := invoke(t, pe, "alice", map[string]any{"space": "documents", "path": file})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		r := decode[pdfResult](t, out)
		t.Logf("%s: %q", file, r.Text)
		if r.NumPages != 2 || r.FirstPage != 1 || r.LastPage != 2 || r.Truncated {
			t.Errorf("%s: %+v", file, r)
		}
		for _, page := range pricingA {
			for _, line := range page {
				if !strings.Contains(r.Text, line) {
					t.Errorf("%s: text lacks %q:\n%s", file, line, r.Text)
				}
			}
		}
		// page order kept
		if strings.Index(r.Text, "Pro plan") > strings.Index(r.Text, "Enterprise plan") {
			t.Errorf("%s: pages out of order:\n%s", file, r.Text)
		}

		// page range: only page 2
		out, err = invoke(t, pe, "alice", map[string]any{"space": "documents", "path": file, "first_page": 2})
		if err != nil {
			t.Fatal(err)
		}
		r = decode[pdfResult](t, out)
		if r.FirstPage != 2 || strings.Contains(r.Text, "Basic plan") || !strings.Contains(r.Text, "Enterprise plan") {
			t.Errorf("%s page 2: %+v", file, r)
		}

		// max_chars
		out, err = invoke(t, pe, "alice", map[string]any{"space": "documents", "path": file, "max_chars": 10})
		if err != nil {
			t.Fatal(err)
		}
		if r = decode[pdfResult](t, out); !r.Truncated || len([]rune(r.Text)) != 10 {
			t.Errorf("%s max_chars 10: %+v", file, r)
		}
	}

	for _, c := range []struct {
		params map[string]any
		code   string
	}{
		{map[string]any{"path": "broken.pdf"}, CodeBadPDF},
		{map[string]any{"path": "empty.pdf"}, CodeBadPDF},
		{map[string]any{"path": "truncated.pdf"}, CodeBadPDF},
		{map[string]any{"path": "text.pdf"}, CodeBadPDF},
		{map[string]any{"path": "minimal.pdf", "first_page": 5}, CodeBadPDF},
		{map[string]any{"path": "minimal.pdf", "first_page": 2, "last_page": 1}, CodeBadParams},
		{map[string]any{"path": "nope.pdf"}, CodeNotFound},
	} {
		c.params["space"] = "documents"
		_, err := invoke(t, pe, "alice", c.params)
		if got := rejectCode(err); got != c.code {
			t.Errorf("%v: %v (code %q), want %q", c.params, err, got, c.code)
		}
	}
}
