package builtin

import (
	"context"
	"encoding/json"
	"io/fs"

	"github.com/airs-dev/airs/pipeline"
)

// ---------------------------------------------------------------- delete-file

// deleteFileTool deletes one file in a space: the built-in destructive tool,
// so the intent gate's paths (a person confirms before it runs) are
// exercised by a real tool. It needs WriteSpace(<space>), which nobody holds
// by default, and has read-file's path safety: the path is relative, has no
// "..", and is resolved through an os.Root, so no symlink leads out of the
// space. It deletes files only, never a folder; a symlink is removed itself,
// not what it points to.
func deleteFileTool(names []string) pipeline.Tool {
	return pipeline.Tool{
		Name:               "delete-file",
		Version:            "1.0.0",
		CapabilityRequired: writeSpaceOfCall,
		Description: "Delete one file in a space (a directory the user has shared, such as documents). " +
			"The file is gone for good: a person confirms the call before it runs. " +
			"Deletes files only, never folders. Returns the space, the path and the size the file had.",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"space": ` + spaceProperty(names) + `,
				"path": {"type": "string", "minLength": 1, "maxLength": 4096,
					"description": "The file's path inside the space, relative (no .. and no leading /), e.g. drafts/old.txt."}
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
				"deleted": {"const": true}
			},
			"required": ["space", "path", "size", "deleted"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Fast,
		// Not idempotent: a second call finds nothing to delete (not_found).
		Destructive: true,
	}
}

type deleteParams struct {
	Space string `json:"space"`
	Path  string `json:"path"`
}

type deleteResult struct {
	Space   string `json:"space"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	Deleted bool   `json:"deleted"`
}

func (s *spaces) deleteFile(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
	var p deleteParams
	if err := decodeParams(ctx, params, &p); err != nil {
		return nil, err
	}
	rel, err := cleanRel(p.Path)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, reject(CodeNotAFile, "give the path of a file in space %q, not the space itself", p.Space)
	}
	root, err := s.openAs(p.Space, call, KindWriteSpace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	st, err := root.Lstat(rel)
	if err != nil {
		return nil, fsError(p.Space, rel, err)
	}
	if st.IsDir() {
		return nil, reject(CodeNotAFile, "%q in space %q is a folder; delete-file deletes files only", rel, p.Space)
	}
	if err := ctx.Err(); err != nil { // the last moment a cancellation can still stop it
		return nil, err
	}
	if err := root.Remove(rel); err != nil {
		return nil, fsError(p.Space, rel, err)
	}
	size := int64(0)
	if st.Mode()&fs.ModeType == 0 {
		size = st.Size()
	}
	return json.Marshal(deleteResult{Space: p.Space, Path: rel, Size: size, Deleted: true})
}
