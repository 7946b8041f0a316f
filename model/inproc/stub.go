//go:build !inproc

package inproc

// Built reports whether this binary has the llama.cpp backend.
const Built = false

// Open is the llama.cpp backend's constructor; without the inproc build
// tag it checks the file (so a wrong path still says what is wrong) and
// then returns ErrNotBuilt.
func Open(path string, opts Options) (*Engine, func(), error) {
	if _, err := Preflight(path, opts); err != nil {
		return nil, nil, err
	}
	return nil, nil, ErrNotBuilt
}
