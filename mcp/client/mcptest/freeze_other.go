//go:build !unix

package mcptest

// freeze has no SIGSTOP here: every goroutine of the call blocks for good.
func freeze() { select {} }
