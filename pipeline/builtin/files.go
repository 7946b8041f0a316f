package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airs-dev/airs/pipeline"
)

// spaceProperty is the schema of the "space" parameter: an enum of the
// configured space names, so grammar-constrained decoding can only emit a
// space that exists.
func spaceProperty(names []string) string {
	if len(names) == 0 {
		return `{"type": "string", "minLength": 1, "description": "Name of a configured space (a directory the user has shared)."}`
	}
	enum, _ := json.Marshal(names)
	return `{"type": "string", "enum": ` + string(enum) +
		`, "description": "Name of a configured space (a directory the user has shared): one of ` +
		strings.Join(names, ", ") + `."}`
}

// ---------------------------------------------------------------- list-files

const (
	listDefaultLimit = 1000
	listMaxLimit     = 10000
	// listMaxVisit bounds a walk, matching or not, so the largest listing
	// fits the Fast class (5 s), under the race detector too
	// (TestBuiltinLimitsFitClass).
	listMaxVisit = 50_000
)

func listFilesTool(names []string) pipeline.Tool {
	return pipeline.Tool{
		Name:               "list-files",
		Version:            "1.0.0",
		CapabilityRequired: readSpaceOfCall,
		Description: "List the files in a folder of a space (a directory the user has shared, such as documents), " +
			"optionally filtered by a glob pattern like *.pdf and optionally recursive into subfolders. " +
			"Returns each file's path, name, type, size in bytes and modification time. " +
			"Use it to find documents, papers, reports or PDFs in the user's folders before reading them.",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"space": ` + spaceProperty(names) + `,
				"dir": {"type": "string", "maxLength": 4096, "default": ".",
					"description": "Folder inside the space, relative (no .. and no leading /). Default: the space's top folder."},
				"pattern": {"type": "string", "minLength": 1, "maxLength": 256, "default": "*",
					"description": "Glob on file names (path.Match syntax: * ? [a-z], and {a,b} for either), e.g. *.pdf or *.{csv,xlsx}. With a / it matches the path relative to dir, e.g. reports/*.pdf."},
				"recursive": {"type": "boolean", "default": false, "description": "Also list subfolders, at any depth."},
				"limit": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000,
					"description": "Maximum number of entries to return."}
			},
			"required": ["space"],
			"additionalProperties": false
		}`),
		ReturnSchema: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"space": {"type": "string"},
				"dir": {"type": "string"},
				"files": {"type": "array", "items": {
					"type": "object",
					"properties": {
						"path": {"type": "string"},
						"name": {"type": "string"},
						"type": {"enum": ["file", "dir", "other"]},
						"size": {"type": "integer", "minimum": 0},
						"mod_time": {"type": "string", "format": "date-time"}
					},
					"required": ["path", "name", "type", "size", "mod_time"],
					"additionalProperties": false
				}},
				"count": {"type": "integer", "minimum": 0},
				"truncated": {"type": "boolean"},
				"skipped": {"type": "integer", "minimum": 0}
			},
			"required": ["space", "dir", "files", "count", "truncated"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Fast,
		Idempotent:   true,
		ReadOnly:     true,
	}
}

type listParams struct {
	Space     string `json:"space"`
	Dir       string `json:"dir"`
	Pattern   string `json:"pattern"`
	Recursive bool   `json:"recursive"`
	Limit     int    `json:"limit"`
}

// FileEntry is one entry of list-files' result.
type FileEntry struct {
	Path    string    `json:"path"` // relative to the space, slash-separated
	Name    string    `json:"name"`
	Type    string    `json:"type"` // file, dir, other
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

type listResult struct {
	Space     string      `json:"space"`
	Dir       string      `json:"dir"`
	Files     []FileEntry `json:"files"`
	Count     int         `json:"count"`
	Truncated bool        `json:"truncated"`
	Skipped   int         `json:"skipped,omitempty"` // links that resolve outside the space, unreadable entries
}

var errLimit = errors.New("limit reached")

func (s *spaces) listFiles(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
	p := listParams{Pattern: "*", Limit: listDefaultLimit}
	if err := decodeParams(ctx, params, &p); err != nil {
		return nil, err
	}
	if p.Limit < 1 || p.Limit > listMaxLimit {
		return nil, reject(CodeBadParams, "limit must be between 1 and %d", listMaxLimit)
	}
	g, err := compileGlob(p.Pattern)
	if err != nil {
		return nil, reject(CodeBadParams, "pattern %q is not a valid glob: %v", p.Pattern, err)
	}
	if r, ok, err := s.remoteFor(p.Space, call); ok {
		if err != nil {
			return nil, err
		}
		return s.listRemote(ctx, r, p)
	}
	dir, err := cleanRel(p.Dir)
	if err != nil {
		return nil, err
	}
	root, err := s.open(p.Space, call)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fsys := root.FS()

	st, err := fs.Stat(fsys, dir)
	if err != nil {
		return nil, fsError(p.Space, dir, err)
	}
	if !st.IsDir() {
		return nil, reject(CodeNotADirectory, "%q in space %q is not a folder", dir, p.Space)
	}

	out := listResult{Space: p.Space, Dir: dir, Files: []FileEntry{}}
	matchPath := strings.Contains(p.Pattern, "/")
	visited := 0
	walkErr := fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if visited++; visited > listMaxVisit {
			out.Truncated = true
			return errLimit
		}
		if err != nil {
			if name == dir {
				return err
			}
			out.Skipped++
			return nil // an unreadable subfolder: skip it, keep going
		}
		if name == dir {
			return nil
		}
		rel := strings.TrimPrefix(name, dir+"/")
		if dir == "." {
			rel = name
		}
		var info fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			// Follow the link through the root: one that resolves outside
			// the space (or nowhere) fails here and is skipped. A link to a
			// folder is listed but not descended into (no cycles).
			info, err = fs.Stat(fsys, name)
		} else {
			info, err = d.Info()
		}
		if err != nil {
			out.Skipped++
			return nil
		}
		subject := d.Name()
		if matchPath {
			subject = rel
		}
		if g.Match(subject) {
			if len(out.Files) == p.Limit {
				out.Truncated = true
				return errLimit
			}
			out.Files = append(out.Files, FileEntry{
				Path:    name,
				Name:    d.Name(),
				Type:    fileType(info),
				Size:    sizeOf(info),
				ModTime: info.ModTime().UTC(),
			})
		}
		if d.IsDir() && !p.Recursive {
			return fs.SkipDir
		}
		return nil
	})
	out.Count = len(out.Files)
	switch {
	case walkErr == nil || errors.Is(walkErr, errLimit):
	case ctx.Err() != nil:
		// Cancelled: deliver what was listed so far, marked truncated.
		out.Truncated = true
		b, _ := result(out)
		return b, ctx.Err()
	default:
		return nil, fsError(p.Space, dir, walkErr)
	}
	return result(out)
}

func fileType(fi fs.FileInfo) string {
	switch {
	case fi.Mode().IsRegular():
		return "file"
	case fi.IsDir():
		return "dir"
	default:
		return "other"
	}
}

func sizeOf(fi fs.FileInfo) int64 {
	if fi.Mode().IsRegular() {
		return fi.Size()
	}
	return 0
}

// ---------------------------------------------------------------- read-file

const (
	readDefaultMax = 1 << 20
	// readMaxMax fits the Fast class (5 s): reading it, checking and
	// encoding it and validating the result stays well within the class's
	// budget, under the race detector too (TestBuiltinLimitsFitClass).
	readMaxMax = 4 << 20
)

func readFileTool(names []string) pipeline.Tool {
	return pipeline.Tool{
		Name:               "read-file",
		Version:            "1.0.0",
		CapabilityRequired: readSpaceOfCall,
		Description: "Read the text of a file in a space (a directory the user has shared, such as documents): " +
			"plain text, Markdown, CSV, JSON, source code, notes. Returns the UTF-8 text, cut at max_bytes with truncated=true. " +
			"Binary files are refused; for PDF documents use pdf-extract instead.",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"space": ` + spaceProperty(names) + `,
				"path": {"type": "string", "minLength": 1, "maxLength": 4096,
					"description": "File path inside the space, relative (no .. and no leading /), e.g. notes/todo.md."},
				"max_bytes": {"type": "integer", "minimum": 1, "maximum": 4194304, "default": 1048576,
					"description": "Read at most this many bytes of the file."}
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
				"size": {"type": "integer", "minimum": 0},
				"text": {"type": "string"},
				"truncated": {"type": "boolean"}
			},
			"required": ["space", "path", "size", "text", "truncated"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Fast,
		Idempotent:   true,
		ReadOnly:     true,
	}
}

type readParams struct {
	Space    string `json:"space"`
	Path     string `json:"path"`
	MaxBytes int64  `json:"max_bytes"`
}

type readResult struct {
	Space     string `json:"space"`
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// openFile opens a regular file in a space for reading.
func (s *spaces) openFile(space, p string, call *pipeline.Call) (*os.File, fs.FileInfo, string, error) {
	rel, err := cleanRel(p)
	if err != nil {
		return nil, nil, "", err
	}
	root, err := s.open(space, call)
	if err != nil {
		return nil, nil, "", err
	}
	defer root.Close() // an open file stays valid after its root is closed
	f, err := root.Open(rel)
	if err != nil {
		return nil, nil, "", fsError(space, rel, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, "", fsError(space, rel, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, "", reject(CodeNotAFile, "%q in space %q is not a regular file", rel, space)
	}
	return f, st, rel, nil
}

func (s *spaces) readFile(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
	p := readParams{MaxBytes: readDefaultMax}
	if err := decodeParams(ctx, params, &p); err != nil {
		return nil, err
	}
	if p.MaxBytes < 1 || p.MaxBytes > readMaxMax {
		return nil, reject(CodeBadParams, "max_bytes must be between 1 and %d", readMaxMax)
	}
	if r, ok, err := s.remoteFor(p.Space, call); ok {
		if err != nil {
			return nil, err
		}
		return s.readRemote(ctx, r, p)
	}
	f, st, rel, err := s.openFile(p.Space, p.Path, call)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readAllCtx(ctx, f, min(st.Size(), p.MaxBytes)+1, p.MaxBytes+1)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, fsError(p.Space, rel, err)
	}
	truncated := int64(len(data)) > p.MaxBytes
	if truncated {
		data = data[:p.MaxBytes]
		data = trimPartialRune(data)
	}
	text, err := asText(ctx, data)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, reject(CodeNotText, "%q in space %q %v; use pdf-extract for PDFs", rel, p.Space, err)
	}
	return readResultJSON(ctx, readResult{Space: p.Space, Path: rel, Size: st.Size(), Text: text, Truncated: truncated})
}

// readAllCtx reads r to its end or to max bytes, in 256 KiB reads with a
// context check between them, into a buffer of the expected size: a 4 MiB
// read from a slow disk or a network mount stops when the call is
// cancelled rather than when the file ends.
func readAllCtx(ctx context.Context, r io.Reader, expect, max int64) ([]byte, error) {
	const chunk = 256 << 10
	buf := make([]byte, 0, expect)
	for int64(len(buf)) < max {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // the file grew: let append pick the size
		}
		end := min(int64(cap(buf)), int64(len(buf))+chunk, max)
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// readResultJSON is result(r) with the text encoded in 64 KiB pieces and
// a context check between them: under the race detector, encoding 4 MiB in
// one go takes most of a second. JSON escapes rune by rune, so the pieces,
// cut at rune boundaries, encode to the same bytes as the whole.
func readResultJSON(ctx context.Context, r readResult) (json.RawMessage, error) {
	const piece = 64 << 10
	var b bytes.Buffer
	b.Grow(len(r.Text) + len(r.Text)/8 + 256)
	head, err := json.Marshal(struct {
		Space string `json:"space"`
		Path  string `json:"path"`
		Size  int64  `json:"size"`
	}{r.Space, r.Path, r.Size})
	if err != nil {
		return nil, err
	}
	b.Write(head[:len(head)-1])
	b.WriteString(`,"text":"`)
	for text := r.Text; text != ""; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cut := min(piece, len(text))
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		enc, err := json.Marshal(text[:cut])
		if err != nil {
			return nil, err
		}
		b.Write(enc[1 : len(enc)-1])
		text = text[cut:]
	}
	fmt.Fprintf(&b, `","truncated":%t}`, r.Truncated)
	return b.Bytes(), nil
}

// trimPartialRune drops an incomplete UTF-8 sequence cut at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return b // ASCII: nothing cut
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// asText checks that data is UTF-8 text (no NUL bytes) and drops a BOM.
func asText(ctx context.Context, data []byte) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return "", errors.New("is binary (NUL byte at offset " + strconv.Itoa(i) + ")")
	}
	// Validated in 256 KiB pieces cut at rune starts, with a context check
	// between them: on a loaded machine under the race detector, checking
	// 4 MiB in one go kept a cancelled read-file busy for a CI run's
	// whole settle window.
	const piece = 256 << 10
	for off := 0; off < len(data); {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		end := min(off+piece, len(data))
		for end < len(data) && !utf8.RuneStart(data[end]) {
			end++
		}
		if !utf8.Valid(data[off:end]) {
			for off < end {
				r, n := utf8.DecodeRune(data[off:end])
				if r == utf8.RuneError && n <= 1 {
					break
				}
				off += n
			}
			return "", errors.New("is not UTF-8 text (invalid byte at offset " + strconv.Itoa(off) + ")")
		}
		off = end
	}
	return string(data), nil
}
