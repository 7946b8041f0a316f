package server

import (
	"os"
	"testing"

	"github.com/airs-dev/airs/mcp/client/mcptest"
)

// The test binary is also an outside MCP server (mcptest), for the tests
// that relay one through AIRS.
func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	os.Exit(m.Run())
}
