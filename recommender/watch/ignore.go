package watch

import (
	"path/filepath"
	"strings"
)

// DefaultIgnore is the Ignore of a Config that sets none: a path is left
// out when any of its elements is hidden (starts with "."; so .git,
// .cache, vim's .x.swp and emacs's .#x lock files), or when its last
// element is an editor's or a download's temporary file: "x~", "#x#",
// "~$x" (office lock files), "4913" (vim's write test), or ends in .swp,
// .swo, .swx, .tmp, .part, .crdownload.
func DefaultIgnore(rel string) bool {
	base := rel
	for rel != "" {
		elem := rel
		if i := strings.IndexByte(rel, filepath.Separator); i >= 0 {
			elem, rel = rel[:i], rel[i+1:]
		} else {
			rel = ""
		}
		if strings.HasPrefix(elem, ".") && elem != "." && elem != ".." {
			return true
		}
		base = elem
	}
	switch {
	case base == "4913",
		strings.HasSuffix(base, "~"),
		strings.HasPrefix(base, "~$"),
		len(base) > 1 && strings.HasPrefix(base, "#") && strings.HasSuffix(base, "#"):
		return true
	}
	for _, ext := range [...]string{".swp", ".swo", ".swx", ".tmp", ".part", ".crdownload"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return false
}
