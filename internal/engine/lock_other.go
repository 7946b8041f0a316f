//go:build !unix

package engine

// Without flock, several processes on one AIRS_HOME may drop one another's
// learned state or fail to open the tool index while another writes it.
func lockPath(string) (func(), error) { return func() {}, nil }
