//go:build !unix

package recommender

// lockDir is a no-op where flock is missing: one process per AIRS_HOME.
func lockDir(string) (func(), error) { return func() {}, nil }
