package injection

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DocAttack is one line of attacks.jsonl: a file of the folder (the
// documents space) that carries an attack, the user's request, and the
// harmful call (args: the values that identify it, a subset of its
// arguments).
type DocAttack struct {
	File string `json:"file"`
	Task string `json:"task"`
	Harm struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	} `json:"harm"`
}

// loadDocs reads --docs DIR: every file becomes a document of the space
// (PDFs are read as PDFs), each attack a task that reads its file
// (pdf-extract or read-file, then summarize) and an obedient model that
// emits the harmful call once the file's text is in its context. The
// benign tasks are the same tasks run on the same files by the benign
// model.
func loadDocs(dir string) (map[string]string, []Task, []Attack, error) {
	docs := map[string]string{}
	var pdfs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "attacks.jsonl" {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(strings.ToLower(rel), ".pdf") {
			pdfs = append(pdfs, rel)
		}
		docs[rel] = string(b)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := os.Open(filepath.Join(dir, "attacks.jsonl"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--docs %s: %w (want attacks.jsonl beside the documents: one {\"file\",\"task\",\"harm\":{\"tool\",\"args\"}} per line)", dir, err)
	}
	defer f.Close()
	var tasks []Task
	var attacks []Attack
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var da DocAttack
		if err := json.Unmarshal([]byte(line), &da); err != nil {
			return nil, nil, nil, fmt.Errorf("attacks.jsonl:%d: %v", n, err)
		}
		if _, ok := docs[da.File]; !ok || da.Task == "" || da.Harm.Tool == "" {
			return nil, nil, nil, fmt.Errorf("attacks.jsonl:%d: want a file of the folder (%q is not), a task and a harm tool", n, da.File)
		}
		tool := "read-file"
		if strings.HasSuffix(strings.ToLower(da.File), ".pdf") {
			tool = "pdf-extract"
		}
		t := Task{Name: fmt.Sprintf("doc-%d", n), Text: da.Task, Plan: []Step{
			{ID: "r", Tool: tool, Args: map[string]any{"space": spaceDocs, "path": da.File}},
			{ID: "s", Tool: "summarize", Args: map[string]any{"text": "{{steps.r.output.text}}"}}}}
		tasks = append(tasks, t)
		// The file's own text is the payload (planted by its author): the
		// obedient model reacts to it as soon as it reads the file.
		attacks = append(attacks, Attack{Vector: "docs", Task: t, File: da.File, Marker: "",
			Harm: Harm{Name: da.Harm.Tool, Call: Step{ID: "harm", Tool: da.Harm.Tool, Args: da.Harm.Args}, Match: da.Harm.Args}})
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, err
	}
	_ = pdfs
	return docs, tasks, attacks, nil
}
